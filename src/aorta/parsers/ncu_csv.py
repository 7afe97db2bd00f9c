"""Reading Nsight Compute's CSV export of a report: the wide `raw` page and the long `details` page.

`--page raw`: a header, a units row, one row per launch (values may carry thousands separators):

    "ID","Process ID","Process Name","Host Name","Kernel Name",...,"gpu__time_duration.sum",...
    "","","","","",...,"us",...
    "5","651","python3.12","127.0.0.1","void at::reduce_kernel<512, 1, ...>(T3)",...,"7.424000",...

`--page details`, one row per launch and metric with its unit (`==PROF==` lines are skipped):

    "ID",...,"Kernel Name",...,"Section Name","Metric Name","Metric Unit","Metric Value"
    "0",...,"Command line profiler metrics","gpu__time_duration.sum","us","6.08"
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.nv_numbers import TIME_BASE, parse_number, to_base
from aorta.parsers.skips import NUL_MARK, Skips, nul_marked

TIME_METRIC = "gpu__time_duration.sum"

_ID, _KERNEL = "ID", "Kernel Name"
_DETAIL_COLUMNS = ("Metric Name", "Metric Unit", "Metric Value")
_TOOL_LINE = re.compile(r"^==[A-Z]+==")


@dataclass(frozen=True)
class NcuLaunch:
    """One profiled kernel launch (one result of the report)."""

    id: int | None
    kernel: str
    values: dict[str, float | None]   # requested metric -> value in base units; None: unreadable


@dataclass
class NcuProfile:
    """What a report export holds for the requested metrics."""

    launches: list[NcuLaunch] = field(default_factory=list)
    units: dict[str, str] = field(default_factory=dict)   # metric -> base unit of its values
    missing: list[str] = field(default_factory=list)      # requested metrics the export lacks
    skips: Skips = field(default_factory=Skips)            # rows cut short or unreadable

    def kernel_table(self, skips: Skips | None = None) -> KernelTable:
        """Per-kernel totals of `gpu__time_duration.sum` (ns). A launch without a readable,
        non-negative time is left out, and counted in `skips` when given."""
        table = KernelTable()
        if self.units.get(TIME_METRIC) != TIME_BASE:
            return table
        for launch in self.launches:
            value = launch.values.get(TIME_METRIC)
            if value is None or not table.add(launch.kernel, value):
                if skips is not None:
                    skips.skip(f"launch {launch.id} ({launch.kernel[:60]!r}) has no readable "
                               f"{TIME_METRIC}")
        return table


def read_ncu_csv(path: Path, metrics: Sequence[str], page: str = "") -> NcuProfile:
    """Read a `--page raw` or `--page details` CSV export: `page` when given, else whichever
    `path` holds. Raises `ValueError` when no header row (with `ID` and `Kernel Name`) is
    found, when a details export is asked for and this is none, or when a raw export has no
    units row (its values could then be ns or us: no number beats a wrong one)."""
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        rows = _csv_rows(fh)
        header = next((r for r in rows if r is not None and _ID in r and _KERNEL in r), None)
        if header is None:
            raise ValueError(f"{path.name}: no ncu CSV header (a row with {_ID!r} and "
                             f"{_KERNEL!r})")
        details = all(c in header for c in _DETAIL_COLUMNS)
        if page == "details" and not details:
            raise ValueError(f"{path.name}: not a details-page export "
                             f"(no {', '.join(_DETAIL_COLUMNS)})")
        if details and page != "raw":
            return _details(header, rows, metrics)
        return _raw(header, rows, metrics, path)


def _csv_rows(lines: Iterable[str]) -> Iterator[list[str] | None]:
    """CSV rows of the lines that are not the tool's own messages; None for a row with a NUL
    byte, and for one the csv module cannot read (a quote left open by a cut file), which ends
    the table."""
    try:
        for row in csv.reader(nul_marked(line for line in lines if not _TOOL_LINE.match(line)),
                              strict=True):
            yield None if NUL_MARK in "".join(row) else row
    except csv.Error:
        yield None


def _raw(header: list[str], rows: Iterator[list[str] | None], metrics: Sequence[str],
         path: Path) -> NcuProfile:
    index = {name: i for i, name in enumerate(header)}
    profile = NcuProfile(missing=[m for m in metrics if m not in index])
    if (units := next(rows, None)) is None:
        return profile            # a header alone: nothing was profiled
    if len(units) < len(header) or units[index[_ID]].strip():
        raise ValueError(f"{path.name}: no units row after the header, so values cannot be "
                         f"scaled (is this a --page raw export?)")
    present = [m for m in metrics if m in index]
    for number, row in enumerate(rows, 1):
        if row is None or len(row) < len(header):
            profile.skips.skip(_bad_row(number, row, len(header)))
            continue
        values = {m: _scaled(row[index[m]], units[index[m]], m, profile) for m in present}
        profile.launches.append(NcuLaunch(_launch_id(row[index[_ID]]), row[index[_KERNEL]], values))
    return profile


def _details(header: list[str], rows: Iterator[list[str] | None],
             metrics: Sequence[str]) -> NcuProfile:
    index = {name: i for i, name in enumerate(header)}
    name_at, unit_at, value_at = (index[c] for c in _DETAIL_COLUMNS)
    wanted = set(metrics)
    launches: dict[str, NcuLaunch] = {}     # one result's rows share its ID
    profile = NcuProfile()
    seen: set[str] = set()
    for number, row in enumerate(rows, 1):
        if row is None or len(row) < len(header):
            profile.skips.skip(_bad_row(number, row, len(header)))
            continue
        key = row[index[_ID]]
        launch = launches.get(key)
        if launch is None:
            launch = launches[key] = NcuLaunch(_launch_id(key), row[index[_KERNEL]], {})
        elif row[index[_KERNEL]] != launch.kernel:
            profile.skips.skip(f"data row {number}: launch {key} is named "
                               f"{row[index[_KERNEL]][:60]!r} here, {launch.kernel[:60]!r} before")
            continue
        metric = row[name_at]
        if metric in wanted:
            seen.add(metric)
            launch.values[metric] = _scaled(row[value_at], row[unit_at], metric, profile)
    profile.missing = [m for m in metrics if m not in seen]
    # A launch that lacks a metric other launches have gets it as None: a lost time row then
    # leaves the launch out of the figures, and counted, as untimed.
    for launch in launches.values():
        for metric in metrics:
            if metric in seen:
                launch.values.setdefault(metric, None)
    profile.launches = list(launches.values())
    return profile


def _bad_row(number: int, row: list[str] | None, width: int) -> str:
    if row is None:
        return (f"data row {number} is not readable CSV (a NUL byte, or a quote left open by "
                f"a cut file)")
    return f"data row {number} has {len(row)} fields, the header has {width}"


def _scaled(text: str, unit: str, metric: str, profile: NcuProfile) -> float | None:
    """`text` in `unit` as a base-unit value; None when unreadable (and for a negative time,
    which no launch can take)."""
    value = parse_number(text)
    if value is None or (metric == TIME_METRIC and value < 0):
        return None
    scaled, base = to_base(value, unit)
    known = profile.units.setdefault(metric, base)
    if known != base:
        # One metric in two incomparable units across launches: keep neither as comparable.
        profile.units[metric] = f"{known}|{base}"
        return None
    return scaled


def _launch_id(text: str) -> int | None:
    value = parse_number(text)
    return int(value) if value is not None and value.is_integer() else None
