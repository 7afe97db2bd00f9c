"""Which way is better for a metric, read from its name.

aorta's metric names end in their unit (`wall_s`, `rocprof_gpu_time_ms`, `max_rss_mib`), so
the suffix says what a change means:

| kind  | suffixes (examples)                          | lower is | verdicts        |
|-------|----------------------------------------------|----------|-----------------|
| rate  | _per_s, _tflops, _gbps, _throughput           | worse    | SLOWER / FASTER |
| count | _count, _calls                                | (neither)| SAME / CHANGED  |
| time  | _ms, _s, _us, _ns, _sec, wall..., cpu...      | better   | FASTER / SLOWER |
| size  | _mib, _mb, _gib, _gb, _kib, _kb, _bytes        | better   | SMALLER / LARGER|
| other | anything else                                 | (neither)| LOWER / HIGHER  |

A count that moves is information (a different code path, another launch), not a speed, so it
gets no statistics and never fails a run. An `other` metric is compared with the same
statistics as a time, but aorta cannot know whether higher is worse, so it never fails a run.
"""

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
    if lowered.endswith(_TIME) or lowered.startswith(("wall", "cpu_")) or lowered == "wall":
        return "time"
    if lowered.endswith(_SIZE):
        return "size"
    return "other"


def direction_words(kind: MetricKind) -> tuple[str, str]:
    """(verdict when new < base, verdict when new > base). Counts have none: ValueError."""
    if kind not in _WORDS:
        raise ValueError(f"a {kind} metric has no direction")
    return _WORDS[kind]
