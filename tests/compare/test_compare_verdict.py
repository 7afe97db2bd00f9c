"""The verdict rule, case by case."""

from __future__ import annotations

import pytest

from aorta.comparison.kinds import direction_words, metric_kind
from aorta.comparison.model import CompareSettings
from aorta.comparison.verdict import ratio_problem

from compare_helpers import judge

SETTINGS = CompareSettings()
BASE = [1.00, 1.01, 0.99, 1.02, 0.98, 1.00]


def scaled(values, factor):
    return [v * factor for v in values]


def test_clear_slowdown_and_speedup():
    slower = judge(BASE, scaled(BASE, 1.2), "time", SETTINGS)
    assert slower.verdict == "SLOWER"
    assert slower.ratio == pytest.approx(1.2)
    assert slower.ci_low > 1.05 and slower.p_value <= 0.05 and slower.more_trials is None
    assert judge(BASE, scaled(BASE, 0.8), "time", SETTINGS).verdict == "FASTER"


def test_kind_decides_the_word():
    assert judge(BASE, scaled(BASE, 1.2), "rate", SETTINGS).verdict == "FASTER"
    assert judge(BASE, scaled(BASE, 0.8), "rate", SETTINGS).verdict == "SLOWER"
    assert judge(BASE, scaled(BASE, 1.2), "size", SETTINGS).verdict == "LARGER"
    assert judge(BASE, scaled(BASE, 0.8), "size", SETTINGS).verdict == "SMALLER"
    assert judge(BASE, scaled(BASE, 1.2), "other", SETTINGS).verdict == "HIGHER"
    assert judge(BASE, scaled(BASE, 0.8), "other", SETTINGS).verdict == "LOWER"


def test_tiny_but_significant_change_reads_same():
    # 1% slower, measured very precisely: real, and too small to matter at +/-5%.
    base = [1.000, 1.001, 0.999, 1.0005, 0.9995, 1.0]
    result = judge(base, scaled(base, 1.01), "time", SETTINGS)
    assert result.p_value <= 0.05
    assert result.verdict == "SAME"
    assert "within +/-5%" in result.note


def test_three_trials_a_side_are_never_judged():
    # Even a tenfold change: 3 vs 3 can never reach p <= 0.05 (smallest p is 0.1).
    result = judge([1.0, 1.1, 0.9], [10.0, 11.0, 9.0], "time", SETTINGS)
    assert result.verdict == "UNCERTAIN"
    assert "can never reach" in result.note
    assert result.more_trials == 1           # 4 per side is the floor


def test_ties_that_reach_alpha_are_judged_without_a_false_note():
    # 3 vs 4 untied can never reach 0.05 (p >= 2/35); four tied trials above three give
    # p = 1/35 = 0.029, which the guard must not contradict.
    result = judge([1.0, 1.1, 0.9], [2.0] * 4, "time", SETTINGS)
    assert result.p_value == pytest.approx(1 / 35)
    assert result.verdict == "SLOWER"
    assert "can never reach" not in result.note


def test_uncertain_says_how_many_more_trials():
    noisy_base = [1.0, 1.3, 0.8, 1.1, 0.95]
    noisy_new = [1.1, 1.4, 0.85, 1.2, 1.0]
    result = judge(noisy_base, noisy_new, "time", SETTINGS)
    assert result.verdict == "UNCERTAIN"
    assert result.more_trials is not None and result.more_trials > 5


def test_identical_constant_samples_are_same():
    result = judge([2.0] * 5, [2.0] * 5, "time", SETTINGS)
    assert result.verdict == "SAME" and result.p_value == 1.0
    assert (result.ci_low, result.ci_high) == (1.0, 1.0)


def test_counts_get_no_statistics():
    same = judge([10.0] * 4, [10.0] * 4, "count", SETTINGS)
    changed = judge([10.0] * 4, [12.0] * 4, "count", SETTINGS)
    assert same.verdict == "SAME" and same.p_value is None
    assert changed.verdict == "CHANGED" and changed.ratio == pytest.approx(1.2)
    assert changed.note == "10 -> 12"


def test_not_comparable():
    assert judge([], [1.0], "time", SETTINGS).verdict == "INCOMPARABLE"
    zero = judge([0.0, 0.0, 0.0, 1.0], [1.0] * 4, "time", SETTINGS)
    assert zero.verdict == "INCOMPARABLE" and "zero" in zero.note
    negative = judge([-1.0] * 4, [-2.0] * 4, "other", SETTINGS)
    assert negative.verdict == "INCOMPARABLE"


@pytest.mark.parametrize("base, new, said", [
    ([3, -3, 3, -3, 3], [1.02] * 5, "base has values of both signs"),
    ([1.0, 1.01, 0.99, 1.0, 1.0], [1, -1, 1, -1, 1], "new has values of both signs"),
    ([-2.0, -2.1, -2.0, -1.9, -2.0], [-4.0, -4.1, -4.0, -3.9, -4.0],
     "base has negative values"),
    ([0.0] * 5, [1.0] * 5, "the base median is zero"),
    ([1.0] * 5, [0.0, 0.0, 0.0, 1.0, 1.0], "the new median is zero"),
    ([5e-324] * 5, [1.02] * 5, "the base median 4.941e-324 is too close to zero for a ratio"),
    ([1e300] * 5, [1e-300] * 5, "the new median 1.000e-300 is too close to zero for a ratio"),
])
def test_data_no_ratio_describes_is_incomparable_with_the_reason(base, new, said):
    for kind in ("time", "rate", "size", "other"):
        found = judge(base, new, kind, SETTINGS)
        assert found.verdict == "INCOMPARABLE" and said in found.note, found
        assert found.ratio is None and found.ci_low is None and found.ci_high is None
        assert found.more_trials is None and found == judge(base, new, kind, SETTINGS)
    assert ratio_problem(base, new) == found.note


def test_the_reason_says_when_the_sides_do_not_overlap():
    assert ratio_problem([5e-324] * 5, [1.02] * 5).endswith(
        "; every new value is above every base value")
    assert ratio_problem([-1.0] * 4, [-2.0] * 4).endswith(
        "; every new value is below every base value")
    assert "every" not in ratio_problem([3, -3, 3, -3, 3], [1.02] * 5)


def test_zeros_inside_a_sample_are_measurements():
    # A kernel that some trials never ran measured 0 ms there; the medians stay above 0.
    assert ratio_problem([0.0, 1.0, 1.0, 1.0, 1.0], [1.0] * 5) == ""
    assert judge([0.0] + BASE, BASE, "time", SETTINGS).verdict != "INCOMPARABLE"


def test_threshold_zero_judges_on_significance_alone():
    strict = CompareSettings(threshold=0.0)
    base = [1.000, 1.001, 0.999, 1.0005, 0.9995, 1.0]
    assert judge(base, scaled(base, 1.01), "time", strict).verdict == "SLOWER"


def test_settings_are_checked():
    with pytest.raises(ValueError, match="threshold"):
        CompareSettings(threshold=1.0)
    with pytest.raises(ValueError, match="alpha"):
        CompareSettings(alpha=0.0)


@pytest.mark.parametrize("name,kind", [
    ("wall_s", "time"), ("cpu_user_s", "time"), ("rocprof_gpu_time_ms", "time"),
    ("proton_top_kernel_ms", "time"), ("ncu_duration_us", "time"), ("wall", "time"),
    ("max_rss_mib", "size"), ("dram_bytes", "size"),
    ("tokens_per_s", "rate"), ("matmul_tflops", "rate"), ("hbm_gbps", "rate"),
    ("rocprof_kernel_count", "count"), ("cprofile_call_count", "count"),
    ("torch_calls", "count"), ("accuracy", "other"), ("loss", "other"),
])
def test_metric_kinds(name, kind):
    assert metric_kind(name) == kind


def test_counts_have_no_direction():
    with pytest.raises(ValueError):
        direction_words("count")
