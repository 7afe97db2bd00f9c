"""Names that become one path component under `--output`: runs, cells and trials. A name is
checked once, where it is made, so no later write can leave the run directory. A *derived*
name longer than `MAX_NAME_BYTES` is shortened to a prefix plus a stable hash; a longer name
the user wrote (a ticket) is refused. The rules: docs/reliability.md, "Paths".
"""

from __future__ import annotations

import unicodedata

from aorta.base.errors import UserError

MAX_NAME_BYTES = 100
_HASH_CHARS = 12
_PLAIN_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
_PLAIN = _PLAIN_START | {".", "-"}
_BAD_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def is_plain_name(name: str) -> bool:
    """Tickets, axis and variant names: ASCII letters, digits, `_`, `.` and `-`, not empty and
    not starting with `.` or `-`. (No `re`: reading a run checks names and should start fast.)"""
    return bool(name) and name[0] in _PLAIN_START and _PLAIN.issuperset(name)


def name_problem(name: str) -> str | None:
    """Why `name` cannot be one path component, or None when it can (length aside)."""
    if not name:
        return "is empty"
    if name in (".", ".."):
        return "is '.' or '..'"
    if "/" in name or "\\" in name:
        return "contains a path separator"
    bad = next((c for c in name if unicodedata.category(c) in _BAD_CATEGORIES), None)
    if bad is not None:
        return f"contains the control or invisible character U+{ord(bad):04X}"
    if name.startswith("-"):
        return "starts with '-' (it would read as an option)"
    if name.startswith("."):
        return "starts with '.'"
    return None


def component_problem(name: str) -> str | None:
    """`name_problem`, or that `name` is longer than MAX_NAME_BYTES; None when it can be one
    path component as it is."""
    problem = name_problem(name)
    if problem is None and len(name.encode()) > MAX_NAME_BYTES:
        problem = f"is {len(name.encode())} bytes long (at most {MAX_NAME_BYTES})"
    return problem


def check_name(what: str, name: str, fix: str) -> str:
    """`name` if it is a valid path component of at most MAX_NAME_BYTES, else `UserError`
    naming `what` it is and the `fix`."""
    problem = component_problem(name)
    if problem is not None:
        raise UserError(f"{what} {printable(name)} {problem}; {fix}")
    return name


def shorten(name: str) -> str:
    """`name`, or past MAX_NAME_BYTES its start plus a stable hash of all of it."""
    raw = name.encode()
    if len(raw) <= MAX_NAME_BYTES:
        return name
    import hashlib  # only a long name needs it; reading a run (sweep status) does not

    digest = hashlib.sha256(raw).hexdigest()[:_HASH_CHARS]
    head = raw[:MAX_NAME_BYTES - _HASH_CHARS - 1].decode("utf-8", "ignore").rstrip("-.")
    return f"{head}-{digest}"


def visible(text: str, keep: str = "\t\n") -> str:
    """`text` with control, format (bidirectional overrides) and unassigned characters shown
    escaped (`\\x1b`, `\\u202e`), so it cannot drive a terminal or reorder what a reader sees;
    the characters in `keep` stay as they are."""
    if text.isascii() and text.isprintable():     # the common case: nothing to escape
        return text
    return "".join(c if c in keep or unicodedata.category(c) not in _BAD_CATEGORIES
                   else c.encode("unicode_escape").decode("ascii") for c in text)


def printable(text: str, limit: int = 80) -> str:
    """`text` quoted for a one-line message: control characters escaped, long text cut."""
    shown = visible(text, keep="")
    if len(shown) > limit:
        shown = shown[:limit - 3] + "..."
    return "'" + shown.replace("'", "\\'") + "'"
