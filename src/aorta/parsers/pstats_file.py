"""Reading a cProfile dump (`python -m cProfile -o FILE`), the marshal format of `pstats`."""

from __future__ import annotations

import math
import pstats
from dataclasses import dataclass
from pathlib import Path

__all__ = ["FunctionRow", "ProfileSummary", "read_pstats"]


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


def read_pstats(path: Path) -> ProfileSummary:
    """Summarise one dump. Raises `ValueError` for a file pstats cannot read."""
    try:
        stats = pstats.Stats(str(path))
    except Exception as exc:  # pstats raises TypeError/EOFError/ValueError on bad marshal data
        raise ValueError(f"{path.name}: not a cProfile dump ({type(exc).__name__}: {exc})") from None
    rows = []
    for (filename, line, func), (_cc, nc, tt, ct, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        if not math.isfinite(tt) or tt < 0:
            continue
        label = func if filename == "~" else f"{filename}:{line}({func})"
        rows.append(FunctionRow(label, int(nc), tt * 1e3, ct * 1e3 if math.isfinite(ct) else 0.0))
    rows.sort(key=lambda r: -r.self_ms)
    return ProfileSummary(sum(r.self_ms for r in rows), sum(r.calls for r in rows), rows)
