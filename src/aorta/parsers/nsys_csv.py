"""Reading Nsight Systems' CUDA kernel summary (`nsys stats --report cuda_gpu_kern_sum`, CSV).

One row per kernel name (releases up to 2022 call the report `gpukernsum`; some add grid and
block columns before `Name`). Names are quoted when they hold commas or quotes:

    Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name
    62.1,186176,3,62058.7,62016.0,62016,62144,73.9,"void gemm<float, 128>(int, float *)"

Printed to stdout the table follows nsys' own lines (`Generating SQLite file ...`,
`Processing [report.sqlite] with [.../cuda_gpu_kern_sum.py]...`), which are skipped; a report
without kernels prints `SKIPPED: report.sqlite does not contain CUDA kernel data.` instead.
Columns are found by name; the time unit is read from the header (`(ns)`, `(us)`, ...).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.nv_numbers import TIME_BASE, parse_number, to_base

__all__ = ["KernelSummary", "read_kern_sum", "read_kern_sum_lines", "NO_KERNELS"]

NO_KERNELS = "does not contain CUDA kernel data"

_TIMED = re.compile(r"^(?P<label>.*?)\s*\((?P<unit>[^()]+)\)\s*$")   # "Total Time (ns)"
_TOTAL, _INSTANCES, _NAME = "Total Time", "Instances", "Name"
_MAX = ("Max", "Maximum")


@dataclass
class KernelSummary:
    """The kernel table of one summary, plus what could not be read."""

    table: KernelTable = field(default_factory=KernelTable)
    rows: int = 0            # data rows seen
    bad_rows: int = 0        # rows cut short or without a readable total
    no_kernels: bool = False  # nsys said the report holds no CUDA kernel data
    header_found: bool = False


def read_kern_sum(path: Path) -> KernelSummary:
    """Read one summary file (or captured stdout). Raises `ValueError` if a header row was
    found but lacks the `Total Time (<unit>)` or `Name` column, or names a unit not of time."""
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        return read_kern_sum_lines(fh, path.name)


def read_kern_sum_lines(lines: Iterable[str], label: str = "<stdout>") -> KernelSummary:
    """`read_kern_sum` over lines already open (a file object or a list of strings)."""
    summary = KernelSummary()
    rows = _rows(lines, summary)
    header = next(rows, None)
    if header is None:
        return summary
    summary.header_found = True
    columns = _columns(header, label)
    for row in rows:
        summary.rows += 1
        if not _add(row, columns, summary.table):
            summary.bad_rows += 1
    return summary


@dataclass(frozen=True)
class _Columns:
    total: int
    total_scale: float       # ns per unit of the Total column
    name: int
    instances: int | None
    max: int | None
    width: int


def _rows(lines: Iterable[str], summary: KernelSummary) -> Iterator[list[str]]:
    """The header row then the data rows; nsys' own lines before the header are dropped. A row
    the csv module cannot read ends the table and counts as bad."""
    in_table = False

    def table_lines() -> Iterator[str]:
        nonlocal in_table
        for line in lines:
            if not in_table:
                if NO_KERNELS in line:
                    summary.no_kernels = True
                if not _looks_like_header(line):
                    continue
                in_table = True
            if line.strip():
                yield line

    reader = csv.reader(table_lines(), strict=True)
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error:
            summary.bad_rows += 1
            return


def _looks_like_header(line: str) -> bool:
    return _TOTAL in line and _NAME in line and "," in line


def _columns(header: list[str], label: str) -> _Columns:
    by_label: dict[str, tuple[int, str]] = {}
    for i, cell in enumerate(header):
        match = _TIMED.match(cell.strip())
        by_label[match["label"] if match else cell.strip()] = (i, match["unit"] if match else "")
    if _TOTAL not in by_label or _NAME not in by_label:
        raise ValueError(f"{label}: header lacks {_TOTAL!r} or {_NAME!r}: {header!r}")
    total_at, unit = by_label[_TOTAL]
    scale, base = to_base(1.0, unit)
    if base != TIME_BASE:
        raise ValueError(f"{label}: {_TOTAL!r} is in {unit!r}, not a unit of time")
    max_at = next((by_label[m][0] for m in _MAX if m in by_label), None)
    instances = by_label.get(_INSTANCES)
    return _Columns(total_at, scale, by_label[_NAME][0],
                    instances[0] if instances else None, max_at, len(header))


def _add(row: list[str], c: _Columns, table: KernelTable) -> bool:
    """Add one kernel row; False when it is cut short or its total is unreadable. An unreadable
    instance count keeps the time but makes the kernel count untrusted."""
    if len(row) < c.width:
        return False
    total = parse_number(row[c.total])
    name = row[c.name]
    if total is None or total < 0 or not name:
        return False
    calls = _count(row[c.instances]) if c.instances is not None else None
    longest = parse_number(row[c.max]) if c.max is not None else None
    return table.add(name, total * c.total_scale, calls,
                     longest * c.total_scale if longest is not None else None)


def _count(text: str) -> int | None:
    value = parse_number(text)
    if value is None or value < 0 or not value.is_integer():
        return None
    return int(value)
