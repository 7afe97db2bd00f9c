"""The CI gate: which rows fail a job, how many it watched, and when it warns."""

from __future__ import annotations

import pytest

from aorta.base.errors import UserError
from aorta.comparison.gate import Gate, evaluate, parse_fail_on
from aorta.comparison.model import CellComparison, CompareSettings, Comparison, Row, TrialCounts

ROWS = (
    Row("c", "metric", "wall_s", "time", "SLOWER", 5, 5, 1.0, 1.2, 1.2, 1.15, 1.26, 0.008),
    Row("c", "metric", "max_rss_mib", "size", "LARGER", 5, 5, 10, 12, 1.2, 1.1, 1.3, 0.008),
    Row("c", "metric", "cpu_user_s", "time", "SAME", 3, 3, 1.0, 1.0, 1.0, 0.9, 1.1, 0.7),
    Row("c", "metric", "rocprof_kernel_count", "count", "CHANGED", 5, 5, 10, 12, 1.2),
    Row("c", "kernel", "gemm", "time", "SLOWER", 5, 5, 2.0, 2.5, 1.25, 1.2, 1.3, 0.008,
        table="rocprof_kernels"),
    Row("c", "kernel", "copy", "time", "SAME", 5, 5, 1.0, 1.0, 1.0, 0.98, 1.02, 0.9,
        table="rocprof_kernels"),
)


def comparison(threshold: float = 0.05) -> Comparison:
    cell = CellComparison("c", "c", "c", TrialCounts(5, 0, 0, 0), TrialCounts(5, 0, 0, 0), ROWS)
    return Comparison("a", "b", CompareSettings(threshold=threshold), (cell,), tested=4)


@pytest.mark.parametrize("fail_on,failing,gated", [
    (("slower",), ["wall_s", "gemm"], 3),            # wall_s, gemm, copy (cpu_user_s: 3 vs 3)
    (("kernels",), ["gemm"], 2),
    (("max_rss_mib",), ["max_rss_mib"], 1),
    (("wall_s", "kernels"), ["wall_s", "gemm"], 3),
    ((), [], 0),
])
def test_what_fails_and_what_was_watched(fail_on, failing, gated):
    gate = evaluate(comparison(), fail_on)
    assert [r.name for r in gate.failing] == failing
    assert gate.gated == gated and gate.warnings == ()


def test_threshold_zero_with_a_gate_warns():
    gate = evaluate(comparison(threshold=0.0), ("slower",))
    (warning,) = gate.warnings
    assert "--threshold 0" in warning and "3 gated rows" in warning
    assert evaluate(comparison(threshold=0.0), ()).warnings == ()


def test_bad_fail_on():
    with pytest.raises(UserError, match="a count"):
        parse_fail_on(["rocprof_kernel_count"])
    with pytest.raises(UserError, match="cannot tell"):
        parse_fail_on(["accuracy"])
    with pytest.raises(UserError, match="names nothing"):
        parse_fail_on(["slower", ""])     # `--fail-on "$UNSET"`: never a gate that cannot fail
    with pytest.raises(UserError, match="no cell compared"):
        evaluate(comparison(), ("typo_ms",))
    assert parse_fail_on(["slower,kernels", "wall_s slower"]) == ("slower", "kernels", "wall_s")
    with pytest.raises(ValueError):
        Gate((), -1, ())
