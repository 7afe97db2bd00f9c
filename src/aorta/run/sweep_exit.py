"""The exit code of a finished `aorta sweep run`, from its outcome.

A failing trial is data, so a sweep with failures still exits 0; but a sweep where no trial
passed measured nothing at all, and a CI job whose every trial crashed must not be green: it
exits 3, with or without `--strict`. Baseline (no-collector) trials do not count: a sweep whose
profiled trials all failed measured nothing, whatever its baselines did.
"""

from __future__ import annotations

from aorta.base.errors import EXIT_INTERRUPTED, EXIT_NONE_PASSED, EXIT_OK, EXIT_STRICT
from aorta.run.sweep import SweepOutcome


def none_passed(outcome: SweepOutcome) -> bool:
    """Trials ran (or were complete already) and not one profiled trial passed."""
    done = sum(c.passed + c.failed + c.errored for c in outcome.cells)
    return done > 0 and sum(c.passed for c in outcome.cells) == 0


def sweep_exit_code(outcome: SweepOutcome, strict: bool) -> int:
    if outcome.status == "interrupted":
        return EXIT_INTERRUPTED
    if none_passed(outcome):
        return EXIT_NONE_PASSED
    if strict and not outcome.all_passed:
        return EXIT_STRICT
    return EXIT_OK
