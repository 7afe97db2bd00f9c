"""What `history show` and `history report` look at: the series that pass the filters, their
changes, the top kernels, and the CI gate (`--fail-on`), which fails only on changes beginning
at the newest `recent` complete runs of a series, so an old, known step does not fail every
later job (and a run recorded with --allow-incomplete cannot push a new one out of view)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median

from aorta.base.errors import UserError
from aorta.comparison.gate import FAIL_ON_WORDS, parse_fail_on, watched
from aorta.comparison.kinds import metric_kind
from aorta.history.changes import DEFAULT_METHOD, detect_changes
from aorta.history.db import open_history
from aorta.history.model import Change, RunInfo, Series
from aorta.history.store import Filters, load_history


@dataclass(frozen=True)
class Settings:
    method: str = DEFAULT_METHOD
    threshold: float = 0.05       # steps smaller than this fraction are not reported
    recent: int = 1               # --fail-on: changes at the newest N runs of a series
    top: int = 5                  # kernels kept per (context, cell); 0 keeps all
    runs: int | None = 200        # the newest runs of each context shown (None: all)


@dataclass(frozen=True)
class Analysed:
    series: Series
    changes: tuple[Change, ...]

    @property
    def latest_median(self) -> float:
        return median(self.series.points[-1].values)


@dataclass(frozen=True)
class View:
    items: list[Analysed]
    db: str                                     # the database, password redacted
    failing: list[tuple[Analysed, Change]]      # the regressions --fail-on fails on
    settings: Settings
    runs: dict[int, list[RunInfo]]              # each context's runs, oldest first
    few_kernels: int                            # kernel series left out: in too few runs


def load_view(db_url: str | None, filters: Filters, settings: Settings,
              fail_on: Iterable[str] = ()) -> View:
    """The series of the history at `db_url` that pass `filters`, analysed. Raises UserError
    for a history that does not exist, a `--fail-on` that cannot gate, or no matching series."""
    gate = parse_fail_on(fail_on)
    with open_history(db_url, create=False) as db:
        series, runs, few = load_history(db, filters, settings.runs, settings.top)
    if not series:
        given = ", ".join(f"--{name} {value!r}" for name, value in vars(filters).items()
                          if value is not None)
        raise UserError(f"{db.shown}: no series matches "
                        f"{given or 'anything (the history is empty)'}")
    items = [Analysed(s, tuple(detect_changes(s, settings.method, settings.threshold)))
             for s in series]
    return View(items, db.shown, regressions(items, gate, settings.recent) if gate else [],
                settings, runs, few)


def regressions(items: Sequence[Analysed], fail_on: Sequence[str],
                recent: int) -> list[tuple[Analysed, Change]]:
    """The regressions that fail the job; UserError for a metric no series has (typos fail)."""
    names = {a.series.metric for a in items if a.series.kernel is None}
    for name in fail_on:
        if name not in FAIL_ON_WORDS and name not in names:
            raise UserError(f"--fail-on {name}: no series of this metric in the history; "
                            f"recorded: {', '.join(sorted(names)) or '(none)'}")
    return [(a, c) for a in items for c in a.changes if c.regression
            and not (recent and sum(p.run.complete for p in a.series.points[c.position:]) > recent)
            and watched(a.series.kernel is not None, a.series.metric,
                        metric_kind(a.series.unit_name), fail_on)]
