"""Numbers written for people, one way everywhere (the JSON keeps raw floats)."""

from __future__ import annotations

import math

# The one table of name suffixes (`comparison.kinds` reads which way is better from the unit);
# a suffix that ends another comes first: `_gb_per_s`, `_per_s`, then `_s`.
_SUFFIX_UNITS = (
    ("_percent", "%"), ("_pct", "%"), ("_cycles", "cycles"), ("_count", "count"),
    ("_calls", "count"), ("_bytes", "B"), ("_kib", "KiB"), ("_mib", "MiB"), ("_gib", "GiB"),
    ("_kb", "KB"), ("_mb", "MB"), ("_gb", "GB"), ("_gb_per_s", "GB/s"), ("_gbps", "GB/s"),
    ("_per_sec", "/s"), ("_per_s", "/s"), ("_tflops", "TFLOPS"), ("_gflops", "GFLOPS"),
    ("_flops", "FLOPS"), ("_seconds", "s"), ("_sec", "s"), ("_ms", "ms"), ("_us", "µs"),
    ("_ns", "ns"), ("_s", "s"),
)


def unit_of(metric: str) -> str:
    """The unit a metric's name declares (`wall_s` -> `s`, `nsys_gpu_time_ms` -> `ms`), or ''."""
    lowered = metric.lower()
    for suffix, unit in _SUFFIX_UNITS:
        if lowered.endswith(suffix):
            return unit
    return ""


def fmt(value: float | None) -> str:
    """Four significant figures, thousands grouped, no trailing zeros; a whole number (a count)
    in full below 1e15 (`1,092,148`); `-` for no value or one that is not finite."""
    if value is None or not math.isfinite(value):
        return "-"
    magnitude = abs(value)
    if value == int(value) and magnitude < 1e15:
        return f"{int(value):,}"
    if magnitude >= 1e7 or magnitude < 1e-3:
        return f"{value:.3e}"
    decimals = max(0, 3 - int(math.floor(math.log10(magnitude))))
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def fmt_with_unit(value: float | None, unit: str) -> str:
    """`3 ms`, `50%`; a count and a unitless figure alone."""
    text = fmt(value)
    if text == "-" or not unit or unit == "count":
        return text
    return f"{text} {unit}" if unit != "%" else f"{text}%"


def signed(value: float) -> str:
    """A difference: `+0.75`, `-1,024`."""
    return ("+" if value >= 0 else "") + fmt(value)


def spread(low: float, high: float, std: float) -> str:
    """`[min–max] ±std`."""
    return f"[{fmt(low)}–{fmt(high)}] ±{fmt(std)}"


def spread_text(median: float, low: float, high: float, std: float, n: int) -> str:
    """`median [min–max] ±std (n=N)`; one trial shows its value alone."""
    return f"{fmt(median)} (n=1)" if n <= 1 else f"{fmt(median)} {spread(low, high, std)} (n={n})"


def fmt_ratio(value: float | None) -> str:
    """A ratio to three decimals (`1.048`); `-` for none."""
    return "-" if value is None else f"{value:.3f}"


def fmt_interval(low: float | None, high: float | None) -> str:
    """`[0.979, 1.157]`; an open end reads `0` below and `inf` above."""
    return f"[{'0' if low is None else f'{low:.3f}'}, {'inf' if high is None else f'{high:.3f}'}]"


def fmt_p(value: float | None) -> str:
    """A p-value to three decimals, `<0.001` below that; `-` for none."""
    return "-" if value is None else "<0.001" if value < 0.001 else f"{value:.3f}"
