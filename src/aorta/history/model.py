"""The history's records, frozen and checked where they are built."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

ChangeVerdict = Literal["SLOWER", "FASTER", "LARGER", "SMALLER", "HIGHER", "LOWER", "CHANGED",
                        "UNCERTAIN"]


@dataclass(frozen=True)
class Context:
    """What must be equal for runs to share a trend line."""

    id: int
    recipe: str
    host: str
    gpu: str
    collect: str            # canonical JSON of collector -> options

    @property
    def label(self) -> str:
        return f"{self.recipe} on {self.host} ({self.gpu})"


@dataclass(frozen=True)
class RunInfo:
    id: int
    context_id: int
    name: str
    created_at: str
    command: tuple[str, ...]
    commit_sha: str | None
    commit_dirty: bool | None
    commit_source: str | None
    status: str = "complete"    # run.json's: a point of a run not `complete` is marked

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @property
    def mark(self) -> str:
        """` (interrupted)` after a run that was not complete; "" after a complete one."""
        return "" if self.complete else f" ({self.status})"

    @property
    def label(self) -> str:
        """The commit (short, `+dirty` when the work tree had changes), else the run time."""
        if self.commit_sha:
            return self.commit_sha[:10] + ("+dirty" if self.commit_dirty else "")
        return self.created_at


@dataclass(frozen=True)
class Point:
    """One run's passing trials for one series (one value per trial)."""

    run: RunInfo
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError("a point needs at least one value")


@dataclass(frozen=True)
class Series:
    """One metric (or one kernel's total time) of one cell in one context, oldest run first."""

    context: Context
    cell: str
    metric: str             # a metric name, or the kernel table (`proton_kernels`) for kernels
    kernel: str | None      # the kernel's name when this is a kernel's series
    points: tuple[Point, ...]

    @property
    def name(self) -> str:
        return f"{self.metric}:{self.kernel}" if self.kernel is not None else self.metric

    @property
    def unit_name(self) -> str:
        """The name whose suffix gives the unit and direction (kernels are totals in ms)."""
        return "total_ms" if self.kernel is not None else self.metric


@dataclass(frozen=True)
class Change:
    """A step between two runs: `position` is the index of the first point after it."""

    position: int
    before: RunInfo           # the last run before the step
    after: RunInfo            # the first run after it
    ratio: float              # geometric mean of run medians after / before
    low: float                # interval of the ratio (Student's t over runs, at `level`)
    high: float               # inf: too few runs to bound it
    level: float
    verdict: ChangeVerdict    # compare's rule, on p_adjusted where the gate adjusted it
    regression: bool          # SLOWER or LARGER
    p_value: float = 1.0      # the step's own two-sided p
    p_adjusted: float | None = None     # across the series --fail-on checks (--correction)

    def __post_init__(self) -> None:
        if self.position < 1:
            raise ValueError("a change needs at least one run before it")
        if not self.low <= self.high:
            raise ValueError(f"interval ({self.low}, {self.high}) is reversed")


@dataclass(frozen=True)
class Recorded:
    run_dir: str
    db: str                   # the database, password redacted
    run_id: int
    replaced: bool            # the same run was recorded before and was replaced
    context: str
    commit: str | None
    commit_source: str | None
    cells: int
    samples: int
    kernel_rows: int
    status: str = "complete"
