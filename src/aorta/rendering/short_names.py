"""Names short enough for a terminal column or a chart label: the one rule for every text table
and SVG label, shortening as the profilers' own tools do (docs/compare.md, "Names in tables").
A name that fits is shown as it is. Python's `file:line(function)` loses directories, as
`pstats.Stats.strip_dirs` prints it, never the function (`<built-in method f>` is never cut);
a C++ name is Nsight's and rocprofv3's short name (return type and parameters dropped, then
template arguments); anything else keeps both ends. Names that read alike in one table get directories back (Python), else ` [1]`, ` [2]`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

ELLIPSIS = "..."
_MIN_WIDTH = 12
_PYTHON = re.compile(r"(?P<file>[^()]+):(?P<line>\d+)\((?P<function>[^()]*)\)")
_NAME_START = re.compile(r"[A-Za-z_~]")
_PYTHON_BUILTIN = re.compile(r"<(?:built-in )?method .+>")   # cProfile's C functions


def short_name(name: str, width: int | None) -> str:
    """`name` for a column `width` characters wide (at least 12); `None`: no limit, `name`."""
    return short_names([name], width)[name]


def short_names(names: Sequence[str], width: int | None) -> dict[str, str]:
    """Each name's short form for one table, no two alike; `width` None keeps names whole."""
    if width is None:
        return {name: name for name in names}
    width = max(width, _MIN_WIDTH)
    forms = {name: _forms(name, width) for name in dict.fromkeys(names)}
    level = {name: _widest_fitting(f, width) for name, f in forms.items()}
    while True:     # a Python file grows past the width: its function is never cut
        clashes = Counter(forms[name][i] for name, i in level.items())
        grow = [name for name, i in level.items() if clashes[forms[name][i]] > 1
                and i + 1 < len(forms[name]) and _PYTHON.fullmatch(name)]
        if not grow:
            break
        for name in grow:
            level[name] += 1
    short = {name: forms[name][i] for name, i in level.items()}
    seen: Counter[str] = Counter()
    taken = set(short.values())
    for name, text in short.items():
        if clashes[text] > 1:
            while True:     # a tag another name already shows is skipped
                seen[text] += 1
                tag = f" [{seen[text]}]"
                narrower = _forms(name, width - len(tag))
                tagged = narrower[_widest_fitting(narrower, width - len(tag))] + tag
                if tagged not in taken:
                    break
            short[name] = tagged
            taken.add(tagged)
    return short


def _forms(name: str, width: int) -> list[str]:
    """The ways to show `name`, least detail first, `name` itself last."""
    python = _PYTHON.fullmatch(name)
    if python:
        where, file = f":{python['line']}({python['function']})", python["file"]
        cuts = [i + 1 for i, char in enumerate(file) if char in "/\\"]
        return [file[i:] + where for i in reversed(cuts)] + [name]
    if _PYTHON_BUILTIN.fullmatch(name):
        return [name]
    function = _cxx_function(name)
    if function is None:
        return list(dict.fromkeys((_middle(name, width), name)))
    compact = _templates(function, keep_first=False)
    # Too long even so: a qualified name keeps its end, the function's own name.
    cut = ELLIPSIS + compact[len(ELLIPSIS) - width:] if "::" in compact else _middle(compact, width)
    return list(dict.fromkeys((compact if len(compact) <= width else cut, compact,
                               _templates(function, keep_first=True), function, name)))


def _widest_fitting(forms: Sequence[str], width: int) -> int:
    return max((i for i, text in enumerate(forms) if len(text) <= width), default=0)


def _cxx_function(name: str) -> str | None:
    """`ns::f<T>` from `void ns::f<T>(int)`: the function with its template arguments, return
    type and parameter list dropped; None when `name` is not shaped so (`Memcpy HtoD
    (Device -> Pinned)`, `<built-in method sum>`)."""
    depths = _depths(name)
    if not _NAME_START.match(name) or depths[-1] != 0:
        return None
    end = len(name)
    if name.endswith(")"):
        end = max((i for i, char in enumerate(name) if char == "(" and depths[i] == 0), default=0)
    spaces = [i for i in range(end) if name[i] == " " and depths[i] == 0]
    if spaces and end == len(name):
        return None          # words, not a signature
    function = name[spaces[-1] + 1 if spaces else 0:end]
    return function if _NAME_START.match(function) else None


def _depths(text: str) -> list[int]:
    """Each character's nesting in `(...)` and template `<...>` (counting its own bracket as
    outside); a final depth of 0 means every bracket closed."""
    depths, depth = [], 0
    for i, char in enumerate(text):
        opens = char == "(" or (char == "<" and i > 0 and (text[i - 1].isalnum() or
                                                         text[i - 1] == "_" or depth))
        closes = char == ")" or (char == ">" and depth and text[i - 1] != "-")
        depth -= closes
        depths.append(depth)
        depth += opens
    return depths + [depth]


def _templates(function: str, keep_first: bool) -> str:
    """`function` with each top-level template argument list cut to `<...>`, or to its first
    argument and `, ...`."""
    depths, out, start = _depths(function), [], -1
    for i, char in enumerate(function):
        if start >= 0 and depths[i] == 0:           # the `>` closing the list opened at start
            inside = function[start + 1:i]
            inner = _depths(inside)
            comma = next((j for j, c in enumerate(inside) if c == "," and inner[j] == 0), None)
            first = inside if comma is None else f"{inside[:comma]}, {ELLIPSIS}"
            out.append(first if keep_first or len(inside) <= len(ELLIPSIS) else ELLIPSIS)
            start = -1
        if start < 0:
            out.append(char)
            start = i if char == "<" and depths[i + 1] == 1 else -1
    return "".join(out)


def _middle(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    room = max(width - len(ELLIPSIS), 2)
    head = (room + 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (room - head):]
