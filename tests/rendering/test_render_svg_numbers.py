"""The render kit's chart geometry and number formats."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from aorta.rendering.numbers import (fmt, fmt_interval, fmt_p, fmt_ratio, fmt_with_unit, signed,
                                     spread_text, unit_of)
from aorta.rendering.svg import Bar, StripRow, bar_chart, nice_ticks, strip_plot, tick_labels


@pytest.mark.parametrize("low, high", [(0.0186, 0.0424), (3556, 3557.7), (0, 144912),
                                       (1e8, 3e8), (1e-5, 5e-5), (-3, 5), (7, 7), (0, 0)])
def test_ticks_cover_the_range_with_distinct_labels(low, high) -> None:
    ticks = nice_ticks(low, high)
    assert ticks[0] <= low and ticks[-1] >= high and len(ticks) >= 2
    assert ticks == sorted(ticks)
    labels = tick_labels(ticks)
    assert len(set(labels)) == len(labels)


def test_tick_labels_keep_the_decimals_that_matter() -> None:
    assert tick_labels([3556.0, 3556.5, 3557.0]) == ["3,556.0", "3,556.5", "3,557.0"]
    assert tick_labels([0.0, 50000.0, 100000.0]) == ["0", "50,000", "100,000"]


def test_nice_ticks_of_nonsense_is_harmless() -> None:
    assert nice_ticks(math.nan, 1.0) == [0.0]
    assert nice_ticks(2.0, 1.0) == [0.0]


@pytest.mark.timeout(10)
@pytest.mark.parametrize("low", [2.0 ** 52, 2.0 ** 60, 1e300, -(2.0 ** 53)])
def test_nice_ticks_end_when_the_step_is_below_what_a_float_resolves(low: float) -> None:
    # Two byte counts a unit apart near 2**52: adding the step no longer moves the value.
    high = low + math.ulp(low)
    ticks = nice_ticks(low, high)
    assert 2 <= len(ticks) <= 8
    strip_plot("max_rss_bytes", "B", [StripRow("a", [(0, low), (1, high)], low, "#000")])


def test_strip_plot_places_each_trial_and_median() -> None:
    svg = strip_plot("wall_s", "s", [StripRow("a", [(0, 1.0), (1, 2.0), (2, 3.0)], 2.0, "#000"),
                                     StripRow("b <x>", [(0, 10.0)], 10.0, "#111", hollow=True)])
    root = ET.fromstring(svg)
    circles = list(root.iter("circle"))
    assert len(circles) == 4 and circles[-1].get("fill") == "white"
    xs = [float(c.get("cx") or 0) for c in circles]
    assert xs[0] < xs[1] < xs[2] < xs[3]
    titles = [t.text for t in root.iter("title")]
    assert "a trial_1: 2 s" in titles and "a median: 2 s" in titles and "b <x>" in titles
    assert "wall_s (s)" in [t.text for t in root.iter("text")]


def test_strip_plot_of_nothing_is_empty() -> None:
    assert strip_plot("x", "", [StripRow("a", [], None, "#000")]) == ""


def test_bar_chart_scales_from_zero_and_shortens_long_names() -> None:
    long_name = "void cutlass::Kernel2<" + "x" * 200 + ">(Params)"
    svg = bar_chart("k", "ms", [Bar(long_name, 8.0, "listed in 2/3 trials"), Bar("b", 0.0)])
    root = ET.fromstring(svg)
    widths = [float(r.get("width") or 0) for r in root.iter("rect")]
    assert widths[0] > 100 and widths[1] == 1.0          # a zero bar is a sliver, not absent
    texts = [t.text or "" for t in root.iter("text")]
    assert "cutlass::Kernel2<...>" in texts      # Nsight's short form: see short_names
    assert any("8 ms  listed in 2/3 trials" == t for t in texts)
    assert any(t.text and long_name in t.text for t in root.iter("title"))


@pytest.mark.parametrize("metric, unit", [
    ("wall_s", "s"), ("nsys_gpu_time_ms", "ms"), ("max_rss_mib", "MiB"), ("x_us", "µs"),
    ("nsys_kernel_count", "count"), ("sm_pct", "%"), ("dram_bytes", "B"), ("proton_backend", ""),
    ("cycles", ""), ("normalized_cycles", "cycles"), ("tokens_per_s", "/s"), ("step_sec", "s"),
    ("hbm_gb_per_s", "GB/s"), ("weights_gb", "GB"), ("launch_calls", "count")])
def test_units_from_metric_names(metric, unit) -> None:
    assert unit_of(metric) == unit


@pytest.mark.parametrize("value, text", [
    (0, "0"), (1.0, "1"), (0.28071, "0.2807"), (39.2675, "39.27"), (10432.0, "10,432"),
    (1234.5678, "1,235"), (0.000123, "1.230e-04"), (2.5e9, "2,500,000,000"),
    (2.5e15, "2.500e+15"), (12345678.5, "1.235e+07"), (-0.0, "0"), (None, "-"),
    (math.inf, "-"), (-3.14159, "-3.142")])
def test_fmt(value, text) -> None:
    assert fmt(value) == text


def test_units_and_spread_text() -> None:
    assert fmt_with_unit(3.0, "ms") == "3 ms" and fmt_with_unit(3.0, "count") == "3"
    assert fmt_with_unit(50.0, "%") == "50%" and fmt_with_unit(None, "s") == "-"
    assert spread_text(2.0, 1.0, 3.0, 1.0, 3) == "2 [1–3] ±1 (n=3)"
    assert spread_text(2.0, 2.0, 2.0, 0.0, 1) == "2 (n=1)"


def test_counts_read_the_same_everywhere() -> None:
    # compare printed 1.09215e+06 where the report printed 1,092,148 (one format now).
    assert fmt(1092148.0) == "1,092,148" and fmt(14588) == "14,588"
    assert fmt(27766604.0) == "27,766,604"      # was 2.777e+07: a count is written in full
    assert signed(0.75) == "+0.75" and signed(-1024.0) == "-1,024" and signed(0.0) == "+0"


def test_ratios_intervals_and_p_as_compare_writes_them() -> None:
    assert fmt_ratio(1.04812) == "1.048" and fmt_ratio(None) == "-"
    assert fmt_interval(0.9791, 1.1573) == "[0.979, 1.157]"
    assert fmt_interval(None, 2.0) == "[0, 2.000]" and fmt_interval(0.9, None) == "[0.900, inf]"
    assert fmt_p(0.0004) == "<0.001" and fmt_p(0.4) == "0.400" and fmt_p(None) == "-"
