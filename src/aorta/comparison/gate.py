"""Which rows fail a CI job under `--fail-on`, for compare and history alike: a word of
`FAIL_ON_WORDS` (`slower`: any SLOWER time or rate metric or kernel; `kernels`: any SLOWER
kernel), or a metric name (SLOWER, or LARGER for a size). Counts and metrics of unknown direction cannot regress (`kinds`), so naming one is an error,
not a gate that never fires; UNCERTAIN never fails, and a watched INCOMPARABLE metric is
named in a warning. The false-alarm guarantee is per row (`family`), so the gate counts the
rows it watched and warns when chance failures are likely.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from aorta.base.errors import UserError
from aorta.base.names import printable
from aorta.comparison import FAIL_ON_WORDS
from aorta.comparison.kinds import REGRESSIONS, metric_kind
from aorta.comparison.model import Comparison, Row
from aorta.stats.rank_test import can_reach

@dataclass(frozen=True)
class Gate:
    """What `--fail-on` watched and what failed it. `gated`: rows it watched that were tested
    (their test could reach alpha), so a chance SLOWER there would fail the job."""

    fail_on: tuple[str, ...]
    gated: int
    failing: tuple[Row, ...]
    warnings: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.gated < 0:
            raise ValueError(f"gated must be >= 0, got {self.gated}")


def parse_fail_on(values: Iterable[str]) -> tuple[str, ...]:
    """Split comma/space separated `--fail-on` values; refuses metrics that cannot regress, and
    a value that names nothing (`--fail-on "$UNSET"` would be a gate that never fails)."""
    names = split_names(values, "--fail-on", "slower, kernels or a metric name")
    for name in (n for n in names if n not in FAIL_ON_WORDS):
        kind = metric_kind(name)
        if kind == "count":
            raise UserError(f"--fail-on {name}: a count is reported as SAME or CHANGED and "
                            f"cannot regress; gate on a time metric instead")
        if kind == "other":
            raise UserError(f"--fail-on {name}: aorta cannot tell whether higher or lower is "
                            f"worse for this metric (name it with a unit suffix such as _ms, "
                            f"_s, _mib or _per_s); allowed words: {', '.join(FAIL_ON_WORDS)}")
    return names


def split_names(values: Iterable[str], flag: str, expected: str) -> tuple[str, ...]:
    """The names in comma/space separated `values` of a repeatable flag, each once; UserError
    for a value that names nothing, which would silently mean the flag's default."""
    for value in values:
        if not value.replace(",", " ").split():
            raise UserError(f"{flag}: {printable(value)} names nothing; give {expected}, or "
                            f"leave {flag} out")
    return tuple(dict.fromkeys(v for value in values for v in value.replace(",", " ").split()))


def evaluate(comparison: Comparison, fail_on: Sequence[str]) -> Gate:
    """The gate over a comparison (`fail_on` already parsed). Raises UserError when a named
    metric was compared in no cell, so a typo never passes silently."""
    refuse_unknown(fail_on, {r.name for r in comparison.rows() if r.scope == "metric"},
                   "no cell compared this metric; compared")
    s = comparison.settings
    rows = [r for r in comparison.rows() if watched(r.scope == "kernel", r.name, r.kind, fail_on)]
    gated = sum(1 for r in rows
                if r.p_value is not None and can_reach(s.alpha, r.base_n, r.new_n))
    warnings = [f"--fail-on watches {r.name} of cell {r.cell}, which could not be judged "
                f"(INCOMPARABLE: {r.note}); it cannot fail the job"
                for r in rows if r.verdict == "INCOMPARABLE" and r.scope == "metric"]
    if fail_on and s.threshold == 0:
        warnings.append(f"--threshold 0 with --fail-on: any significant change fails the job, "
                        f"however small; each of the {gated} gated rows can fail it by chance "
                        f"(up to alpha = {s.alpha:g} each). Set a practical --threshold such as "
                        f"0.02, or add --correction holm")
    failing = tuple(r for r in rows if r.verdict in REGRESSIONS)
    return Gate(tuple(fail_on), gated, failing, tuple(warnings))


def refuse_unknown(fail_on: Sequence[str], known: set[str], why: str) -> None:
    """UserError for a metric `fail_on` names that is not `known`, so a typo never passes."""
    unknown = [name for name in fail_on if name not in FAIL_ON_WORDS and name not in known]
    if unknown:
        raise UserError(f"--fail-on {unknown[0]}: {why}: {', '.join(sorted(known)) or '(none)'}")


def watched(kernel: bool, name: str, kind: str, fail_on: Sequence[str]) -> bool:
    """Whether `--fail-on` watches a kernel, or a metric `name` of `kind`: the one rule for
    compare's gate and history's, so the same change fails both or neither."""
    if kernel:
        return "slower" in fail_on or "kernels" in fail_on
    if name in fail_on:
        return kind in ("time", "rate", "size")
    return "slower" in fail_on and kind in ("time", "rate")
