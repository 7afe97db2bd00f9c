"""Units read off metric names, and numbers written for people (the JSON keeps raw floats)."""

from __future__ import annotations

import math

__all__ = ["unit_of", "fmt", "fmt_with_unit", "spread_text"]

# Longest suffix first, so `_mib` is not read as `_b`.
_SUFFIX_UNITS = (
    ("_percent", "%"), ("_bytes", "B"), ("_count", "count"), ("_cycles", "cycles"),
    ("_pct", "%"), ("_mib", "MiB"), ("_gib", "GiB"), ("_kib", "KiB"), ("_ms", "ms"),
    ("_us", "µs"), ("_ns", "ns"), ("_s", "s"),
)


def unit_of(metric: str) -> str:
    """The unit a metric's name declares (`wall_s` -> `s`, `nsys_gpu_time_ms` -> `ms`), or ''."""
    lowered = metric.lower()
    for suffix, unit in _SUFFIX_UNITS:
        if lowered.endswith(suffix):
            return unit
    return ""


def fmt(value: float | None) -> str:
    """Four significant figures, thousands grouped, no trailing zeros; `-` for no value."""
    if value is None or not math.isfinite(value):
        return "-"
    if value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e7 or magnitude < 1e-3:
        return f"{value:.3e}"
    if value == int(value) and magnitude < 1e7:
        return f"{int(value):,}"
    decimals = max(0, 3 - int(math.floor(math.log10(magnitude))))
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_with_unit(value: float | None, unit: str) -> str:
    text = fmt(value)
    if text == "-" or not unit or unit == "count":
        return text
    return f"{text} {unit}" if unit != "%" else f"{text}%"


def spread_text(median: float, low: float, high: float, std: float, n: int) -> str:
    """`median [min–max] ±std (n=N)`; one trial shows its value alone."""
    if n <= 1:
        return f"{fmt(median)} (n=1)"
    return f"{fmt(median)} [{fmt(low)}–{fmt(high)}] ±{fmt(std)} (n={n})"
