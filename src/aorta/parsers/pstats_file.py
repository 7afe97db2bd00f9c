"""Reading a cProfile dump (`python -m cProfile -o FILE`), the marshal format of `pstats`: one
marshalled dict, key (file, line, function), value (primitive calls, calls, own seconds,
cumulative seconds, callers):

    {("mod.py", 12, "work"): (1, 1, 0.25, 0.5, {("mod.py", 3, "<module>"): (1, 1, 0.25, 0.5)}),
     ("~", 0, "<built-in method time.sleep>"): (2, 2, 0.2, 0.2, {...}), ...}

Read with `marshal` directly: `pstats.Stats` adds every entry up before anything can be checked
and raises on the first one of a wrong type. A file cut anywhere cannot be unmarshalled.

cProfile names a C function bound to an object with the object's address, new in every process
(`<built-in method __new__ of type object at 0x7f579045ea00>`): names are read without it, and
entries that then share a name are summed (cumulative time counts twice a nested call).
"""

from __future__ import annotations

import marshal
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aorta.parsers.skips import Skips, short

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class FunctionRow:
    name: str          # "file:line(function)", as pstats prints it
    calls: int         # primitive + recursive calls
    self_ms: float     # time inside the function itself (pstats "tottime")
    cum_ms: float      # time including what it called (pstats "cumtime")


@dataclass(frozen=True)
class ProfileSummary:
    total_ms: float
    calls: int
    functions: list[FunctionRow]   # by self time, longest first
    skips: Skips = field(default_factory=Skips)


def read_pstats(path: Path) -> ProfileSummary:
    """Summarise one dump. Raises `ValueError` for a file that is not a marshalled dict."""
    try:
        with open(path, "rb") as fh:
            stats = marshal.load(fh)
    except (EOFError, ValueError, TypeError) as exc:
        raise ValueError(f"{path.name}: not a cProfile dump ({type(exc).__name__}: {exc})") \
            from None
    if not isinstance(stats, dict):
        raise ValueError(f"{path.name}: not a cProfile dump (a marshalled "
                         f"{type(stats).__name__}, not a dict)")
    by_name: dict[str, FunctionRow] = {}
    skips = Skips()
    for key, value in stats.items():
        row = _row(key, value)
        if isinstance(row, str):
            skips.skip(row)
        elif (seen := by_name.get(row.name)) is not None:    # read without their addresses
            by_name[row.name] = FunctionRow(row.name, seen.calls + row.calls,
                                            seen.self_ms + row.self_ms, seen.cum_ms + row.cum_ms)
        else:
            by_name[row.name] = row
    rows = sorted(by_name.values(), key=lambda r: -r.self_ms)
    total = math.fsum(r.self_ms for r in rows)
    return ProfileSummary(total, sum(r.calls for r in rows), rows, skips)


def _row(key: Any, value: Any) -> FunctionRow | str:
    """One entry as a row, or why it cannot be read."""
    if not (isinstance(key, tuple) and len(key) == 3 and isinstance(key[0], str)
            and isinstance(key[2], str) and type(key[1]) is int):
        return f"an entry whose key is {short(key)}, not (file, line, function)"
    filename, line, func = key
    label = _ADDRESS.sub("", func if filename == "~" else f"{filename}:{line}({func})")
    if not (isinstance(value, tuple) and len(value) == 5):
        return f"{label[:60]}: a value that is {short(value)}, not 5 fields"
    primitive, calls, own, cumulative, _callers = value
    for what, count in (("primitive calls", primitive), ("calls", calls)):
        if type(count) is not int or count < 0:
            return f"{label[:60]}: {what} is {short(count)}"
    for what, seconds in (("tottime", own), ("cumtime", cumulative)):
        if type(seconds) not in (int, float) or not math.isfinite(seconds) or seconds < 0:
            return f"{label[:60]}: {what} is {short(seconds)}"
    return FunctionRow(label, calls, own * 1e3, cumulative * 1e3)
