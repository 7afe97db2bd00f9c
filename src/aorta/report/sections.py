"""Plain-text pieces every rendering shares, so HTML and Markdown say the same things."""

from __future__ import annotations

import shlex
from collections import Counter

from aorta.rendering import fmt_interval, fmt_ratio, fmt_with_unit, unit_of
from aorta.report.model import CellReport, Failure, KernelChart, Report, RunHeader
from aorta.report.notices import name_list

_MAIN_SOFTWARE = ("python", "aorta", "torch", "triton", "CUDA", "ROCm", "CUDA/ROCm")
STATUS_WORDS = {"complete": "complete", "interrupted": "interrupted",
                "running": "running or killed", "unknown": "status unknown"}
#: (anchor, heading) of the sections every rendering has, in reading order.
SECTIONS = (("run", "Run"), ("warnings", "Warnings"), ("cells", "Cells"), ("metrics", "Metrics"),
            ("overhead", "Collector overhead"), ("plots", "Distributions"),
            ("kernels", "Top kernels"), ("failures", "Failures"),
            ("trials", "Trials and artifacts"))
CELL_HEAD = ("cell", "trials", "pass", "fail", "error", "missing", "wall median", "captures",
             "flags")
OVERHEAD_HEAD = ("cell", "metric", "profiled median", "baseline median", "ratio", "interval",
                 "n profiled / baseline")
OVERHEAD_NOTE = ("Median over profiled trials divided by the median over baseline trials (the "
                 "same command with no collector, interleaved).")
TRIAL_HEAD = ("trial", "verdict", "wall", "reason", "artifacts")
PATHS_NOTE = "Paths are relative to the run directory."
NO_FIGURE = "No trial passed, so there is no figure to show."
NO_KERNELS = "No collector in this run published a per-kernel table."
ALL_PASSED = "Every trial that ran passed."


def verdict_counts(report: Report) -> str:
    """`7/9 trials passed, 1 failed, 1 errored, 0 missing; 3 cells; collectors: nsys`."""
    t = report.totals
    collectors = ", ".join(report.header.collectors) or "none"
    base = [tr for c in report.cells for tr in c.trials if tr.baseline]
    base_text = (f"; baseline (no collector): {sum(tr.verdict == 'pass' for tr in base)}/"
                 f"{len(base)} passed" if base else "")
    return (f"{t['passed']}/{t['planned']} trials passed, {t['failed']} failed, "
            f"{t['errored']} errored, {t['missing']} missing{base_text}; "
            f"{len(report.cells)} cell(s); collectors: {collectors}")


def header_rows(h: RunHeader) -> list[tuple[str, str]]:
    """The run header as (label, text) rows, in reading order; unknown values say so."""
    when = h.started_at or h.created_at or "unknown"
    if h.finished_at:
        when += f" to {h.finished_at}"
    if h.starts > 1:
        when += f" (started {h.starts} times: resumed {h.starts - 1} time(s))"
    recipe = h.recipe or "(none: defaults and flags)"
    if h.recipe_sha256:
        recipe += f"  sha256 {h.recipe_sha256[:12]}"
    rows = [("command", shlex.join(h.command) if h.command else "unknown"), ("recipe", recipe),
            ("collectors", ", ".join(h.collectors) or "none"),
            ("trials per cell", str(h.trials_per_cell) if h.trials_per_cell else "unknown"),
            ("when (UTC)", when), ("status", STATUS_WORDS.get(h.status, h.status)),
            ("host", h.host or "unknown"), ("os", h.os or "unknown"),
            ("cpu", h.cpu or "unknown"), ("gpu", _gpu_line(h))]
    main = [(k, v) for k, v in h.software.items() if k in _MAIN_SOFTWARE]
    others = [f"{k} {v}" for k, v in h.software.items() if k not in _MAIN_SOFTWARE]
    return rows + main + ([("other packages", ", ".join(others))] if others else [])


def _gpu_line(h: RunHeader) -> str:
    if not h.gpus:
        return "none recorded"
    names = Counter(gpu.name + (f" ({gpu.memory}" if gpu.memory else "")
                    + (f", driver {gpu.driver})" if gpu.driver else (")" if gpu.memory else ""))
                    for gpu in h.gpus)
    return "; ".join(f"{n} x {label}" if n > 1 else label for label, n in names.items())


def cell_flags(cell: CellReport) -> list[str]:
    bad = [c for c, states in cell.captures.items() if any(s != "ok" for s in states)]
    flags = ((cell.unreliable, "unreliable (10% or more errored)"),
             (cell.missing, f"{cell.missing} missing"), (cell.passed == 0, "no passing trial"),
             (bad, "capture problems: " + ", ".join(bad)))
    return [text for shown, text in flags if shown]


def capture_text(cell: CellReport) -> str:
    """`nsys ok 3, cprofile ok 2 empty 1`; '-' when no collector reported."""
    return ", ".join(f"{collector} " + " ".join(f"{s} {n}" for s, n in sorted(states.items()))
                     for collector, states in cell.captures.items()) or "-"


def failure_facts(f: Failure) -> str:
    """Exit code, signal and timeout, leaving out what the reason already says."""
    facts = [f"exit code {f.exit_code}" if f.exit_code is not None else "",
             f"signal {f.signal}" if f.signal is not None else "",
             "timed out" if f.timed_out else ""]
    return ", ".join(x for x in facts if x and x not in f.reason)


def repeats_text(f: Failure) -> str:
    """`trial_1, trial_3 the same way`: the other trials folded into this failure."""
    return f"{name_list(f.repeats, 10)} the same way"


def wall_median(cell: CellReport) -> str:
    wall = cell.metrics.get("wall_s")
    return fmt_with_unit(wall.median, "s") if wall else "-"


def chart_note(chart: KernelChart) -> str:
    return f"top {len(chart.bars)} of {chart.listed}, {chart.trials} passing trial(s)"


def overhead_rows(report: Report) -> list[tuple[str, ...]]:
    """An `OVERHEAD_HEAD` row per cell and metric with a baseline, ratios as `1.048x`."""
    rows: list[tuple[str, ...]] = []
    for cell in report.cells:
        for o in cell.overhead.values():
            unit = unit_of(o.metric)
            profiled, base = cell.metrics.get(o.metric), cell.baseline.get(o.metric)
            interval = (f"95% interval {fmt_interval(o.low, o.high)}" if o.low is not None
                        and o.high is not None else "too few trials for an interval")
            rows.append((cell.name, o.metric,
                         fmt_with_unit(profiled.median if profiled else None, unit),
                         fmt_with_unit(base.median if base else None, unit),
                         f"{fmt_ratio(o.ratio)}x", interval, f"{o.n_profiled} / {o.n_baseline}"))
    return rows
