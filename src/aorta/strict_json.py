"""JSON for the commands that only read, without `import json`.

`import json` loads `re` (with `enum`, `functools`, `collections`), which costs about half
of a bare interpreter's start; reading a run's records needs none of it. `loads` parses with
the same C scanner `json.loads` uses and gives exactly its result; on any input it does not
accept as a whole (any error, a byte-order mark, trailing data) it hands the text to
`json.loads`, so every error is json's own, word for word. `dumps_indented` writes what `json.dumps(doc, indent=2)`
writes for documents of strings, numbers, booleans, nulls, lists and string-keyed objects,
and hands anything else (subclasses, tuples, other keys) to `json.dumps`. Where the C accelerator is absent, both are json's.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

__all__ = ["loads", "dumps_indented"]

_WHITESPACE = " \t\n\r"          # json's own: [ \t\n\r]
_MAX_DEPTH = 64                  # deeper (or circular): json.dumps writes it, or says why not
_LITERALS = {None: "null", True: "true", False: "false"}
_INF = float("inf")


class _Context:
    """What json's C scanner reads from its decoder: json.loads' defaults, strict."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    def __init__(self, parse_constant: Callable[[str], Any]) -> None:
        self.parse_constant = parse_constant


def loads(text: str, parse_constant: Callable[[str], Any]) -> Any:
    """`json.loads(text, parse_constant=parse_constant)`."""
    try:
        import _json
    except ImportError:
        _json = None  # type: ignore[assignment]
    start = len(text) - len(text.lstrip(_WHITESPACE))
    if _json is not None and not text.startswith("\ufeff"):
        scan: Any = _json.make_scanner(_Context(parse_constant))  # type: ignore[arg-type]
        try:
            doc, end = scan(text, start)
        except Exception:   # noqa: BLE001 -- json.loads below raises json's own error
            # (The scanner reports errors through json.decoder's JSONDecodeError; before
            # Python 3.12 it does not import that module itself, and fails with SystemError.)
            pass
        else:
            if end == len(text.rstrip(_WHITESPACE)) and end >= start:
                return doc
    import json

    return json.loads(text, parse_constant=parse_constant)


def dumps_indented(doc: Any) -> str:
    """`json.dumps(doc, indent=2)`."""
    try:
        import _json
    except ImportError:
        _json = None  # type: ignore[assignment]
    if _json is not None:
        parts: list[str] = []
        if _write(doc, parts, "\n", _json.encode_basestring_ascii):
            return "".join(parts)
    import json

    return json.dumps(doc, indent=2)


def _write(value: Any, parts: list[str], newline: str, quote: Callable[[str], str]) -> bool:
    """Append `value`'s JSON to `parts`; False at the first value of another type."""
    if isinstance(value, str):
        parts.append(quote(value))
    elif value is None or isinstance(value, bool):
        parts.append(_LITERALS[value])
    elif len(newline) > 2 * _MAX_DEPTH:
        return False
    elif type(value) is int:
        parts.append(int.__repr__(value))
    elif type(value) is float:
        parts.append(float.__repr__(value) if value == value and abs(value) != _INF
                     else "NaN" if value != value else "Infinity" if value > 0 else "-Infinity")
    elif type(value) in (list, dict) and not value:
        parts.append("[]" if type(value) is list else "{}")
    elif type(value) is list:
        inner = newline + "  "
        parts.append("[")
        for i, item in enumerate(value):
            parts.append(inner if i == 0 else "," + inner)
            if not _write(item, parts, inner, quote):
                return False
        parts.append(newline + "]")
    elif type(value) is dict:
        inner = newline + "  "
        parts.append("{")
        for i, (key, item) in enumerate(value.items()):
            if not isinstance(key, str):
                return False
            parts.append((inner if i == 0 else "," + inner) + quote(key) + ": ")
            if not _write(item, parts, inner, quote):
                return False
        parts.append(newline + "}")
    else:
        return False
    return True
