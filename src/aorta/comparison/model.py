"""The records a comparison produces: plain, frozen, checked when built; renderers read them.
A `Row` is one verdict on a metric or kernel of one cell: medians in the metric's unit (kernel
rows: ms of total time per trial), `ratio` = new / base median within `ci_low`..`ci_high`
(None when unbounded or not computed).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, get_args

from aorta.comparison.kinds import MetricKind
from aorta.stats.family import CORRECTIONS, Correction

Verdict = Literal["FASTER", "SLOWER", "SAME", "UNCERTAIN", "SMALLER", "LARGER", "LOWER",
                  "HIGHER", "CHANGED", "NEW", "GONE", "INCOMPARABLE"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
Scope = Literal["metric", "kernel"]


@dataclass(frozen=True)
class CompareSettings:
    """`threshold`: a fraction (0.05: changes within +/-5% read SAME); `alpha`: each row's test
    level, the interval's being 1 - alpha; `correction`: of p-values across rows (`family`)."""

    threshold: float = 0.05
    alpha: float = 0.05
    metrics: tuple[str, ...] = ()        # empty: every metric both sides measured
    kernels: bool = True
    match_templates: bool = False
    correction: Correction = "none"

    def __post_init__(self) -> None:
        if not 0 <= self.threshold < 1:
            raise ValueError(f"threshold must lie in [0, 1), got {self.threshold}")
        if not 0 < self.alpha <= 0.5:
            raise ValueError(f"alpha must lie in (0, 0.5], got {self.alpha}")
        if self.correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {CORRECTIONS}, got {self.correction!r}")


@dataclass(frozen=True)
class TrialCounts:
    passed: int
    failed: int
    errored: int
    missing: int                         # planned but without a readable result

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.errored + self.missing


@dataclass(frozen=True)
class Row:
    cell: str
    scope: Scope
    name: str                            # metric name, or the normalised kernel name
    kind: MetricKind
    verdict: Verdict
    base_n: int                          # trials that measured it
    new_n: int
    base_median: float | None = None
    new_median: float | None = None
    ratio: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    p_value: float | None = None         # the two-sided Mann-Whitney p
    more_trials: int | None = None       # UNCERTAIN: at least this many more trials per side
    more_trials_high: int | None = None  # ... and at most this many (None: no upper bound)
    note: str = ""
    table: str | None = None             # kernel rows: the metric holding the table
    base_calls: float | None = None      # kernel rows: median launches per trial
    new_calls: float | None = None
    raw_names: tuple[str, ...] = ()      # kernel rows: names before normalisation
    p_adjusted: float | None = None      # the p that decided, under --correction

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}, got {self.verdict!r}")
        if self.scope not in ("metric", "kernel"):
            raise ValueError(f"scope must be metric or kernel, got {self.scope!r}")
        if self.scope == "kernel" and not self.table:
            raise ValueError(f"kernel row {self.name!r} must name its table")
        for name, p in (("p_value", self.p_value), ("p_adjusted", self.p_adjusted)):
            if p is not None and not 0 <= p <= 1:
                raise ValueError(f"{name} must lie in [0, 1], got {p}")
        if self.ci_low is not None and self.ci_high is not None and self.ci_low > self.ci_high:
            raise ValueError(f"interval is reversed: [{self.ci_low}, {self.ci_high}]")
        if (self.more_trials is not None or self.more_trials_high is not None) \
                and self.verdict != "UNCERTAIN":
            raise ValueError("only an UNCERTAIN row advises more trials")
        if self.more_trials_high is not None and (
                self.more_trials is None or self.more_trials_high < self.more_trials):
            raise ValueError(f"more-trials range is reversed: {self.more_trials}.."
                             f"{self.more_trials_high}")
        if self.verdict == "NEW" and self.base_median is not None:
            raise ValueError(f"a NEW row has no base value: {self.name!r}")
        if self.verdict == "GONE" and self.new_median is not None:
            raise ValueError(f"a GONE row has no new value: {self.name!r}")

    @property
    def change(self) -> float:
        """new median - base median (a missing side counts as 0), in the metric's unit."""
        change = (self.new_median or 0.0) - (self.base_median or 0.0)
        return change if math.isfinite(change) else 0.0


@dataclass(frozen=True)
class CellComparison:
    label: str                           # "naive", or "naive -> blocked" for two named cells
    base_cell: str
    new_cell: str
    base_trials: TrialCounts
    new_trials: TrialCounts
    rows: tuple[Row, ...]
    notes: tuple[str, ...] = ()

    def metric_rows(self) -> list[Row]:
        return [r for r in self.rows if r.scope == "metric"]

    def kernel_rows(self) -> list[Row]:
        """Kernel rows, largest absolute time change first."""
        return sorted((r for r in self.rows if r.scope == "kernel"),
                      key=lambda r: (-abs(r.change), r.name))


@dataclass(frozen=True)
class Comparison:
    base: str                            # what the user named: a run directory, maybe :cell
    new: str
    settings: CompareSettings
    cells: tuple[CellComparison, ...]
    notes: tuple[str, ...] = ()
    tested: int = 0                      # rows whose test could reach alpha: the family

    def rows(self) -> Iterator[Row]:
        for cell in self.cells:
            yield from cell.rows

    def tally(self) -> dict[str, int]:
        """How many rows got each verdict, in VERDICTS order, zeros left out."""
        counts: Counter[str] = Counter(r.verdict for r in self.rows())
        return {v: counts[v] for v in VERDICTS if counts[v]}
