"""Which rows fail a CI job: `--fail-on slower`, or a list of metric names.

- `slower`: any row judged SLOWER (a time or rate metric, or a kernel);
- `kernels`: any kernel judged SLOWER;
- a metric name: that metric judged SLOWER, or LARGER for a size such as `max_rss_mib`.

Counts and metrics of unknown direction cannot regress (see `kinds`), so naming one is an
error rather than a gate that can never fire. UNCERTAIN never fails a job: it is reported, and
more trials settle it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aorta.compare.kinds import REGRESSIONS, metric_kind
from aorta.compare.model import Comparison, Row
from aorta.errors import UserError

__all__ = ["parse_fail_on", "regressions"]

_WORDS = ("slower", "kernels")


def parse_fail_on(values: Iterable[str]) -> tuple[str, ...]:
    """Split comma/space separated `--fail-on` values; refuses metrics that cannot regress."""
    names = tuple(dict.fromkeys(v for value in values for v in value.replace(",", " ").split()))
    for name in names:
        if name in _WORDS:
            continue
        kind = metric_kind(name)
        if kind == "count":
            raise UserError(f"--fail-on {name}: a count is reported as SAME or CHANGED and "
                            f"cannot regress; gate on a time metric instead")
        if kind == "other":
            raise UserError(f"--fail-on {name}: aorta cannot tell whether higher or lower is "
                            f"worse for this metric (name it with a unit suffix such as _ms, "
                            f"_s, _mib or _per_s); allowed words: {', '.join(_WORDS)}")
    return names


def regressions(comparison: Comparison, fail_on: Sequence[str]) -> list[Row]:
    """The rows that fail the job under `fail_on` (already parsed). Raises UserError when a
    named metric was compared in no cell, so a typo never passes silently."""
    compared = {r.name for r in comparison.rows() if r.scope == "metric"}
    for name in fail_on:
        if name not in _WORDS and name not in compared:
            raise UserError(f"--fail-on {name}: no cell compared this metric; compared: "
                            f"{', '.join(sorted(compared)) or '(none)'}")
    out = []
    for row in comparison.rows():
        if row.verdict not in REGRESSIONS:
            continue
        if ("slower" in fail_on and row.verdict == "SLOWER") \
                or ("kernels" in fail_on and row.scope == "kernel") \
                or (row.scope == "metric" and row.name in fail_on):
            out.append(row)
    return out
