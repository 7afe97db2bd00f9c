"""The rocprof collector's figures: which CSV files they come from, and how far to trust them.

rocprofv3 writes the stats and the trace from the same dispatch records, so when both exist each
checks the other (kernels, calls per kernel against dispatches, totals): that catches a file cut
exactly at a line break. Figures come from whole stats, else a whole trace, else whatever was
read, as a `partial` capture (docs/collectors/reading.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from aorta.collectors.base import Metrics, TrialOutcome, capture_status, settle
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.rocprof_csv import FileReport, read_stats, read_trace
from aorta.parsers.skips import Skips

Reader = Callable[[Path, KernelTable], FileReport]


@dataclass
class _Source:
    """What one kind of file (stats or trace) gave, over every file of that kind."""

    kind: str
    table: KernelTable
    reports: list[FileReport]
    skips: Skips

    @property
    def whole(self) -> bool:
        return bool(self.table.rows) and not self.skips


def numbers(stats: list[Path], traces: list[Path], outcome: TrialOutcome) -> Metrics:
    """Kernel figures and the capture state from the stats and trace files found."""
    from_stats, from_trace = _read("stats", stats, read_stats), _read("trace", traces, read_trace)
    everything = from_stats.reports + from_trace.reports
    if overflow := [r for r in everything if r.overflow]:
        return capture_status("rocprof", "unparsed", "; ".join(_describe(r) for r in overflow))
    chosen, notes = _choose(from_stats, from_trace)
    if not chosen.table.rows:
        if all(r.rows == 0 and not r.note for r in everything):
            return capture_status("rocprof", "empty", "rocprofv3 recorded no kernel dispatch "
                                  "(its kernel CSV files hold a header only)")
        return capture_status("rocprof", "unparsed",
                              "; ".join(_describe(r) for r in everything)[:1000])
    if not (figures := chosen.table.metrics("rocprof")):
        return capture_status("rocprof", "unparsed",
                              "the summed kernel time is not a finite number")
    why = [f"{chosen.kind}: {chosen.skips.describe('row')}"] if chosen.skips else []
    if killed := _killed(outcome):
        why.append(killed)
    return _source_metrics(chosen) | notes | settle(
        "rocprof", figures, chosen.skips.count + bool(killed),
        "; ".join(why + ["figures cover only the rows read"]))


def _read(kind: str, paths: list[Path], reader: Reader) -> _Source:
    table, reports, skips = KernelTable(), [], Skips()
    for path in paths:
        try:
            report = reader(path, table)
        except OSError as exc:
            report = FileReport(path.name, note=f"unreadable ({exc.strerror or exc})")
        reports.append(report)
        skips.absorb(report.skips, report.file)
        if report.note and (report.rows or report.note != "empty file"):
            skips.skip(f"{report.file}: {report.note}")
    return _Source(kind, table, reports, skips)


def _choose(stats: _Source, trace: _Source) -> tuple[_Source, Metrics]:
    """The source of the figures, and notes on the other one."""
    notes: Metrics = {}
    if stats.whole and trace.whole:
        short = _short_side(stats.table, trace.table)
        if short == "stats":
            notes["rocprof_stats_note"] = ("the stats files hold fewer calls than the trace has "
                                           "dispatches (cut at a line break?); figures come from "
                                           "the trace")
            return trace, notes
        if short == "trace":
            notes["rocprof_trace_note"] = ("the trace holds fewer dispatches than the stats count "
                                           "calls (cut at a line break?); figures come from the "
                                           "stats")
        elif short == "both":
            stats.skips.skip("the stats and the trace disagree on calls or time per kernel, "
                             "each in a different kernel: one of them lost rows")
        return stats, notes
    if stats.whole:
        if trace.skips:
            notes["rocprof_trace_note"] = f"the trace was not read whole ({trace.skips.describe('row')})"
        return stats, notes
    if trace.whole:
        if stats.skips:
            notes["rocprof_stats_note"] = (f"the stats were not read whole "
                                           f"({stats.skips.describe('row')}); figures come from "
                                           f"the trace")
        return trace, notes
    return (stats if stats.table.rows else trace), notes


def _short_side(stats: KernelTable, trace: KernelTable) -> str:
    """"" when both give every kernel the same calls and total; "stats" or "trace" when one
    only ever falls short of the other; "both" when each falls short somewhere."""
    names = set(stats.rows) | set(trace.rows)
    stats_short = trace_short = False
    for name in names:
        s, t = stats.rows.get(name), trace.rows.get(name)
        s_calls, t_calls = (s.calls or 0) if s else 0, (t.calls or 0) if t else 0
        s_ns, t_ns = s.total_ns if s else 0.0, t.total_ns if t else 0.0
        if s_calls == t_calls and math.isclose(s_ns, t_ns, rel_tol=1e-9, abs_tol=0.5):
            continue
        if s_calls <= t_calls and s_ns <= t_ns:
            stats_short = True
        elif t_calls <= s_calls and t_ns <= s_ns:
            trace_short = True
        else:
            return "both"
    if stats_short and trace_short:
        return "both"
    return "stats" if stats_short else "trace" if trace_short else ""


def _killed(outcome: TrialOutcome) -> str:
    """Why the files may end at a line break although rows are missing, or ''. A payload
    killed or timed out may have stopped rocprofv3 between two rows, and such a file reads
    like a whole one."""
    if outcome.timed_out:
        return ("the payload timed out and was killed: rocprofv3 may have stopped writing "
                "between two rows")
    if outcome.signal is not None:
        return (f"the payload was killed by signal {outcome.signal}: rocprofv3 may have "
                f"stopped writing between two rows")
    return ""


def _source_metrics(source: _Source) -> Metrics:
    metrics: Metrics = {"rocprof_source": source.kind}
    if source.kind == "trace":
        layouts = sorted({r.layout for r in source.reports if r.layout and r.rows})
        metrics["rocprof_csv_layout"] = "+".join(layouts) or "unknown"
    if untrusted := sum(r.untrusted_calls for r in source.reports):
        metrics["rocprof_untrusted_counts"] = untrusted
    return metrics


def _describe(report: FileReport) -> str:
    if report.note:
        return f"{report.file}: {report.note}"
    why = f"; {report.skips.describe('row')}" if report.skips else ""
    return (f"{report.file}: {report.rows} data rows, none usable ({report.filtered} not "
            f"KERNEL_DISPATCH{why})")
