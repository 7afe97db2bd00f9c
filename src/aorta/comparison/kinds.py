"""Which way is better for a metric, read from the unit its name ends in (`wall_s`, `max_rss_mib`).
The kinds, their verdicts and why some never fail a run: docs/compare.md, "metric kinds"."""

from __future__ import annotations

from typing import Literal

from aorta.rendering import unit_of

MetricKind = Literal["time", "rate", "size", "count", "other"]

_KIND_OF_UNIT: dict[str, MetricKind] = {
    "s": "time", "ms": "time", "µs": "time", "ns": "time", "count": "count",
    **dict.fromkeys(("B", "KiB", "MiB", "GiB", "KB", "MB", "GB"), "size"),
    **dict.fromkeys(("/s", "GB/s", "TFLOPS", "GFLOPS", "FLOPS"), "rate")}

# (word when the value went down, word when it went up)
_WORDS: dict[str, tuple[str, str]] = {"time": ("FASTER", "SLOWER"), "rate": ("SLOWER", "FASTER"),
                                      "size": ("SMALLER", "LARGER"), "other": ("LOWER", "HIGHER")}

REGRESSIONS = frozenset({"SLOWER", "LARGER"})


def metric_kind(name: str) -> MetricKind:
    """The kind of a metric named like aorta's metrics (case-insensitive)."""
    lowered, kind = name.lower(), _KIND_OF_UNIT.get(unit_of(name), "other")
    if kind == "rate" or lowered.endswith(("_throughput", "_bandwidth", "_bw")):
        return "rate"
    if kind == "count" or lowered == "calls":
        return "count"
    if kind == "time" or lowered.startswith(("wall", "cpu_")):
        return "time"
    return kind


def direction_words(kind: MetricKind) -> tuple[str, str]:
    """(verdict when new < base, verdict when new > base). Counts have none: ValueError."""
    if kind not in _WORDS:
        raise ValueError(f"a {kind} metric has no direction")
    return _WORDS[kind]
