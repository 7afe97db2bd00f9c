"""One-line messages for schema violations: the dotted key path, the problem, the bad value.

Shared by the recipe loader and the collectors' option models so every message reads alike:
`collect.proton.backend: Input should be 'auto', 'cupti' or ..., got 'cuda'`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from aorta.base.redaction import REDACTED, looks_secret


def dotted(loc: tuple[Any, ...] | list[Any]) -> str:
    """`("axes", "dtype", 0)` -> `axes.dtype[0]`."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "<top level>"


def describe_value(value: Any, path: str = "") -> str:
    """A short repr of a bad value; never echoes what looks like a secret."""
    if looks_secret(path) and not path.startswith("retain."):  # retain.on_pass: a verdict
        return REDACTED
    if path == "env" or path.endswith(".env"):
        return "<environment values not shown>"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def format_validation_error(exc: Any, prefix: tuple[Any, ...] = (),
                            allowed_keys: Callable[[tuple[Any, ...]], list[str] | None]
                            | None = None) -> str:
    """The first error of a pydantic `ValidationError`, as one line. `allowed_keys(parent)`
    lists the keys allowed where an unknown key was found."""
    err = exc.errors(include_url=False)[0]
    loc = tuple(p for p in err["loc"] if not _is_union_tag(p))
    path = dotted(prefix + loc)
    kind = err["type"]
    if kind == "extra_forbidden":
        allowed = allowed_keys(loc[:-1]) if allowed_keys else None
        hint = f"; allowed: {', '.join(sorted(allowed))}" if allowed else ""
        return f"{path}: unknown key{hint}"
    if kind == "missing":
        return f"{path}: required key is missing"
    msg = str(err["msg"]).removeprefix("Value error, ")
    if not prefix + loc:  # a rule across keys: the message names them itself
        return msg
    return f"{path}: {msg}, got {describe_value(err.get('input'), path)}"


def _is_union_tag(part: Any) -> bool:
    # pydantic puts the tried union member ("list[str]", "function-after[...]") in the location.
    return isinstance(part, str) and ("[" in part or part in {"str", "int", "float", "bool", "list", "dict"})
