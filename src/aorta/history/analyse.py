"""What `history show` and `history report` look at: the series that pass the filters, their
changes, the top kernels, and the CI gate (`--fail-on`), which fails only on changes beginning
at the newest `recent` complete runs of a series, so an old, known step does not fail every
later job (and a run recorded with --allow-incomplete cannot push a new one out of view). The
gate's p-values are adjusted across every series it checks (`--correction`, Holm by default:
with nothing changed, a job fails by chance at most alpha of the time, not alpha per series)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from aorta.base.errors import UserError
from aorta.comparison.gate import parse_fail_on, refuse_unknown, watched
from aorta.comparison.kinds import metric_kind
from aorta.history.changes import detect_changes, judged
from aorta.history.db import open_history
from aorta.history.model import Change, RunInfo, Series
from aorta.history.store import Filters, load_history
from aorta.stats.family import Correction, adjust


@dataclass(frozen=True)
class Settings:
    threshold: float = 0.05       # steps whose interval lies within it are SAME, not reported
    recent: int = 1               # --fail-on: changes at the newest N runs of a series
    top: int = 5                  # kernels kept per (context, cell); 0 keeps all
    correction: Correction = "holm"     # --fail-on: of p-values across the series it checks
    runs: int | None = 200        # the newest runs of each context shown (None: all)


@dataclass(frozen=True)
class Analysed:
    series: Series
    changes: tuple[Change, ...]


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
    items = [Analysed(s, tuple(detect_changes(s, settings.threshold)))
             for s in series]
    items, failing = gated(items, gate, settings) if gate else (items, [])
    return View(items, db.shown, failing, settings, runs, few)


def gated(items: Sequence[Analysed], fail_on: Sequence[str], settings: Settings
          ) -> tuple[list[Analysed], list[tuple[Analysed, Change]]]:
    """`items` with the changes `--fail-on` checks judged again on p adjusted across the series
    it watches (a watched series without a change counts as one test with p = 1), and the
    regressions among them; UserError for a metric no series has (typos fail)."""
    refuse_unknown(fail_on, {a.series.metric for a in items if a.series.kernel is None},
                   "no series of this metric in the history; recorded")
    watching = [a for a in items if watched(a.series.kernel is not None, a.series.metric,
                                            metric_kind(a.series.unit_name), fail_on)]
    checked = [(a, c) for a in watching for c in a.changes if not settings.recent
               or sum(p.run.complete for p in a.series.points[c.position:]) <= settings.recent]
    untested = len(watching) - len({id(a) for a, _ in checked})
    adjusted = adjust([c.p_value for _, c in checked] + [1.0] * untested, settings.correction)
    again = {}
    for (a, c), q in zip(checked, adjusted):    # a larger p can only turn a verdict UNCERTAIN
        fresh = judged(c, q, metric_kind(a.series.unit_name), settings.threshold)
        again[id(c)] = replace(fresh if fresh and c.verdict != "UNCERTAIN" else c, p_adjusted=q)
    items = [replace(a, changes=tuple(again.get(id(c), c) for c in a.changes)) for a in items]
    return items, [(a, c) for a in items for c in a.changes
                   if c.p_adjusted is not None and c.regression]
