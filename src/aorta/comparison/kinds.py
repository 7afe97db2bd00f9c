"""Which way is better for a metric, read from the unit its name ends in (`wall_s`, `max_rss_mib`).
The kinds, their verdicts and why some never fail a run: docs/compare.md, "metric kinds"."""

from __future__ import annotations

from typing import Literal

MetricKind = Literal["time", "rate", "size", "count", "other"]

_RATE = ("_per_s", "_per_sec", "_tflops", "_gflops", "_flops", "_gbps", "_gb_per_s",
         "_throughput", "_bandwidth", "_bw")
_COUNT = ("_count", "_calls")
_TIME = ("_ms", "_s", "_us", "_ns", "_sec", "_seconds")
_SIZE = ("_mib", "_mb", "_gib", "_gb", "_kib", "_kb", "_bytes")

# (word when the value went down, word when it went up)
_WORDS: dict[str, tuple[str, str]] = {
    "time": ("FASTER", "SLOWER"),
    "rate": ("SLOWER", "FASTER"),
    "size": ("SMALLER", "LARGER"),
    "other": ("LOWER", "HIGHER"),
}

REGRESSIONS = frozenset({"SLOWER", "LARGER"})


def metric_kind(name: str) -> MetricKind:
    """The kind of a metric named like aorta's metrics (case-insensitive)."""
    lowered = name.lower()
    if lowered.endswith(_RATE):   # before time: "_per_s" also ends in "_s"
        return "rate"
    if lowered.endswith(_COUNT) or lowered == "calls":
        return "count"
    if lowered.endswith(_TIME) or lowered.startswith(("wall", "cpu_")):
        return "time"
    if lowered.endswith(_SIZE):
        return "size"
    return "other"


def direction_words(kind: MetricKind) -> tuple[str, str]:
    """(verdict when new < base, verdict when new > base). Counts have none: ValueError."""
    if kind not in _WORDS:
        raise ValueError(f"a {kind} metric has no direction")
    return _WORDS[kind]
