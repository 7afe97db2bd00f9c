"""Series plus their detected changes, the report's choice of kernels, and the CI gate.

`--fail-on` takes compare's words: `slower` (any regression), `kernels` (a kernel's), or metric
names. Only changes that begin at one of the newest `recent` runs of their series fail a job:
a CI job records its run, then asks whether *that* run brought a regression; an old step that
is already known does not fail every later job.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median

from aorta.base.errors import UserError
from aorta.history.changes import DEFAULT_METHOD, detect_changes
from aorta.history.model import Change, Series

_WORDS = ("slower", "kernels")


@dataclass(frozen=True)
class Settings:
    method: str = DEFAULT_METHOD
    threshold: float = 0.05       # steps smaller than this fraction are not reported
    level: float = 0.95           # of the ratio's interval
    recent: int = 1               # --fail-on: changes at the newest N runs of a series


@dataclass(frozen=True)
class Analysed:
    series: Series
    changes: tuple[Change, ...]

    @property
    def latest_median(self) -> float:
        return median(self.series.points[-1].values)


def analyse(series: Iterable[Series], settings: Settings) -> list[Analysed]:
    return [Analysed(s, tuple(detect_changes(s, settings.method, settings.threshold,
                                             settings.level)))
            for s in series]


def top_kernels(items: Sequence[Analysed], count: int) -> list[Analysed]:
    """Metrics all kept; of kernels, the `count` largest per (context, cell) at their newest
    run. `count` 0 keeps every kernel."""
    metrics = [a for a in items if a.series.kernel is None]
    groups: dict[tuple[int, str], list[Analysed]] = {}
    for a in items:
        if a.series.kernel is not None:
            groups.setdefault((a.series.context.id, a.series.cell), []).append(a)
    kernels = []
    for group in groups.values():
        ranked = sorted(group, key=lambda a: -a.latest_median)
        kernels += ranked[:count] if count else ranked
    return metrics + kernels


def parse_fail_on(values: Iterable[str]) -> tuple[str, ...]:
    """Split `--fail-on` values (commas or spaces); refuses metrics that cannot regress."""
    from aorta.comparison.gate import parse_fail_on as compare_parse

    return compare_parse(values)


def regressions(items: Sequence[Analysed], fail_on: Sequence[str],
                recent: int) -> list[tuple[Analysed, Change]]:
    """The regressions that fail the job. A metric name that no series has is an error, so a
    typo never passes silently."""
    names = {a.series.metric for a in items if a.series.kernel is None}
    for name in fail_on:
        if name not in _WORDS and name not in names:
            raise UserError(f"--fail-on {name}: no series of this metric in the history; "
                            f"recorded: {', '.join(sorted(names)) or '(none)'}")
    out = []
    for item in items:
        newest = len(item.series.points) - recent
        for change in item.changes:
            if not change.regression or (recent and change.position < newest):
                continue
            kernel = item.series.kernel is not None
            if "slower" in fail_on or ("kernels" in fail_on and kernel) \
                    or (not kernel and item.series.metric in fail_on):
                out.append((item, change))
    return out
