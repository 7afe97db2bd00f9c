"""Per-cell summaries of a run's trials: `matrix.json` (for programs) and `perf.md` (for people).
Statistics are over passing trials only (a failed trial's numbers describe something else);
verdict counts keep the others visible."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from aorta.rendering import fmt, fmt_interval, fmt_ratio, md_code, md_table, md_text
from aorta.run.gpu_notes import gpu_state_notes
from aorta.run.stderr_line import quoted_stream
from aorta.store.layout import trial_log
from aorta.store.record_checks import HARNESS_FIGURES
from aorta.store.records import TrialResult

MATRIX_SCHEMA = 1
MIN_FOR_INTERVAL = 3   # fewer trials on a side give no meaningful interval
_NAMED = 3             # trials named beside a reason; the rest are counted


@dataclass(frozen=True)
class MetricStats:
    n: int
    mean: float
    std: float          # sample standard deviation; 0.0 for a single trial
    min: float
    median: float
    max: float

    @classmethod
    def of(cls, values: Sequence[float]) -> MetricStats | None:
        """None when the values overflow (a mean of two 1.7e308 has no finite answer)."""
        try:
            mean = statistics.fmean(values)
            std = statistics.stdev(values) if len(values) > 1 else 0.0
        except OverflowError:
            return None
        if not (math.isfinite(mean) and math.isfinite(std)):
            return None
        return cls(len(values), mean, std, min(values), statistics.median(values), max(values))


def _stats(samples: Mapping[str, list[float]]) -> dict[str, MetricStats]:
    return {key: stats for key, values in sorted(samples.items())
            if (stats := MetricStats.of(values)) is not None}


@dataclass(frozen=True)
class CellSummary:
    name: str
    trials: int                     # trials planned
    passed: int
    failed: int
    errored: int
    missing: int                    # planned but without a result (interrupted run)
    metrics: dict[str, MetricStats]
    captures: dict[str, dict[str, int]] = field(default_factory=dict)   # collector -> state -> n
    reasons: list[str] = field(default_factory=list)                    # distinct non-pass reasons
    baseline: dict[str, MetricStats] = field(default_factory=dict)      # no-collector trials
    overhead: dict[str, Overhead] = field(default_factory=dict)         # profiled / baseline
    baseline_passed: int = 0        # no-collector trials (`baseline: true`) that passed
    baseline_trials: int = 0        # no-collector trials with a result
    skipped: int = 0                # planned but skipped by stop_after (not in `missing`)
    stop_note: str | None = None    # why, when stop_after stopped the cell

    @property
    def unreliable(self) -> bool:
        """One trial in ten (or more) could not be measured: its numbers need a second look."""
        done = self.passed + self.failed + self.errored
        return done > 0 and self.errored / done >= 0.10


@dataclass(frozen=True)
class Overhead:
    """Median of the profiled trials over the median of the baseline trials, with the 95%
    percentile-bootstrap interval computed exactly (no resampling, so the same trials always
    give the same interval); None bounds when there are too few trials for an interval."""

    ratio: float
    low: float | None
    high: float | None
    n_profiled: int
    n_baseline: int


def _samples(results: Iterable[TrialResult], allow_partial: bool = False) -> dict[str, list[float]]:
    values: dict[str, list[float]] = {}
    for r in results:
        if r.verdict == "pass":
            for key, value in r.numeric_metrics(allow_partial).items():
                values.setdefault(key, []).append(value)
    return values


def summarize_cell(name: str, planned: int, results: Iterable[TrialResult],
                   collectors: Sequence[str] = (), allow_partial: bool = False,
                   skipped: int = 0, stop_note: str | None = None) -> CellSummary:
    """Verdict counts, capture states, and statistics over passing trials of the figures that
    are measurements (`TrialResult.numeric_metrics`)."""
    everything = list(results)
    profiled = [r for r in everything if not r.baseline]
    based = [r for r in everything if r.baseline]
    values, base_values = _samples(profiled, allow_partial), _samples(based, allow_partial)
    captures: dict[str, dict[str, int]] = {}
    for c in collectors:
        for r in profiled:
            if (capture := r.captures.get(c)) is not None:
                states = captures.setdefault(c, {})
                states[capture.state] = states.get(capture.state, 0) + 1
    count = {v: sum(r.verdict == v for r in profiled) for v in ("pass", "fail", "error")}
    reasons = _reasons(name, profiled, "") + _reasons(name, based, "baseline: ")
    return CellSummary(name, planned, count["pass"], count["fail"], count["error"],
                       max(0, planned - skipped - len(profiled)),
                       _stats(values), captures, reasons, _stats(base_values),
                       _overheads(values, base_values),
                       sum(r.verdict == "pass" for r in based), len(based), skipped, stop_note)


def _reasons(cell: str, results: Sequence[TrialResult], prefix: str) -> list[str]:
    """One line per distinct reason a trial did not pass: the trials it names and, when the
    payload ran, the log of the first that says why (relative to the run directory)."""
    by_reason: dict[str, list[TrialResult]] = {}
    for r in sorted(results, key=lambda r: r.index):
        if r.verdict != "pass":
            by_reason.setdefault(r.reason, []).append(r)
    lines = []
    for reason, trials in sorted(by_reason.items()):
        names = ", ".join(t.name for t in trials[:_NAMED])
        names += f" and {len(trials) - _NAMED} more" if len(trials) > _NAMED else ""
        stream = quoted_stream(reason, trials[0].stderr_tail)
        log = next((trial_log(cell, t.name, stream) for t in trials if t.launched), None)
        lines.append(f"{prefix}{reason} ({names}" + (f"; see {log})" if log else ")"))
    return lines


def _overheads(profiled: Mapping[str, list[float]],
               baseline: Mapping[str, list[float]]) -> dict[str, Overhead]:
    from aorta.stats.interval import ratio_interval

    out = {}
    for key in ("wall_s", "cpu_user_s", "max_rss_mib"):
        a, b = profiled.get(key), baseline.get(key)
        if not a or not b or statistics.median(b) <= 0:
            continue
        low = high = None
        if min(len(a), len(b)) >= MIN_FOR_INTERVAL:
            low, high = ratio_interval(b, a, 0.95)
        out[key] = Overhead(statistics.median(a) / statistics.median(b), low, high, len(a), len(b))
    return out


def matrix_document(run: Mapping[str, Any], cells: Sequence[CellSummary]) -> dict[str, Any]:
    return {"schema_version": MATRIX_SCHEMA, "run": dict(run),
            "cells": [dict(asdict(c), unreliable=c.unreliable) for c in cells]}


def perf_markdown(title: str, run: Mapping[str, Any], cells: Sequence[CellSummary]) -> str:
    """The human table: verdict counts, then one table per metric across cells. Counts are of
    profiled trials; no-collector (baseline) trials have a column of their own."""
    lines = [f"# {md_text(title)}", ""]
    for key in ("command", "recipe", "collectors", "status"):
        if run.get(key) not in (None, "", []):
            value = " ".join(run[key]) if isinstance(run[key], list) else run[key]
            lines.append(f"- {key}: {md_code(value)}")
    lines += ["", *_verdict_table(cells)]
    keys = sorted({k for c in cells for k in c.metrics}, key=lambda k: (k not in HARNESS_FIGURES, k))
    if keys:
        rows = [(md_text(key), md_text(c.name), str(s.n), *map(fmt, (s.mean, s.std, s.min,
                                                                       s.median, s.max)))
                for key in keys for c in cells if (s := c.metrics.get(key)) is not None]
        lines += ["", "## Metrics over passing trials", "",
                  *md_table(("metric", "cell", "n", "mean", "std", "min", "median", "max"), rows,
                            "llrrrrrr")]
    if any(c.overhead for c in cells):
        rows = [(md_text(c.name), md_text(key), fmt_ratio(o.ratio),
                 fmt_interval(o.low, o.high) if o.low is not None and o.high is not None
                 else "needs >= 3 trials each", f"{o.n_profiled} / {o.n_baseline}")
                for c in cells for key, o in c.overhead.items()]
        lines += ["", "## Collector overhead (profiled trials over no-collector baseline trials)",
                  "", *md_table(("cell", "metric", "ratio of medians", "95% interval",
                                 "n profiled / baseline"), rows, "llr")]
    notes = cell_gpu_notes(cells)
    if notes:
        lines += ["", "## GPU state", ""] + [f"- {md_text(note)}" for note in notes]
    failures = [f"- {md_text(c.name)}: {md_text(r)}" for c in cells for r in c.reasons]
    if failures:
        lines += ["", "## Why trials did not pass", "", *failures]
    return "\n".join(lines) + "\n"


def _verdict_table(cells: Sequence[CellSummary]) -> list[str]:
    based = any(c.baseline_trials for c in cells)
    rows = []
    for c in cells:
        notes = ["unreliable (>= 10% errors)"] if c.unreliable else []
        notes += [c.stop_note] if c.stop_note else []
        for collector, states in c.captures.items():
            bad = sorted((s, n) for s, n in states.items() if s != "ok")
            if bad:
                notes.append(f"{collector} capture " + ", ".join(f"{s} x{n}" for s, n in bad))
        base = [f"{c.baseline_passed}/{c.baseline_trials}"] if based else []
        rows.append((md_text(c.name), *map(str, (c.trials, c.passed, c.failed, c.errored,
                                                 c.missing)), *base, md_text(", ".join(notes))))
    head = ("cell", "trials", "pass", "fail", "error", "missing",
            *(["baseline pass"] if based else []), "note")
    return md_table(head, rows, "lrrrrr" + ("r" if based else ""))


def cell_gpu_notes(cells: Sequence[CellSummary]) -> list[str]:
    """Throttling, and SM clocks that differ between cells (telemetry collector)."""
    return gpu_state_notes({c.name: {k: s.median for k, s in c.metrics.items()
                                     if k.startswith("telemetry_")} for c in cells})
