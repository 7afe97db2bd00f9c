"""Per-rank captures: naming files by rank, and rolling per-rank figures up into the run's.

A multi-rank trial publishes, beside each rank's own figures under `<c>_ranks`, one figure
over all ranks: counts are summed; times take the slowest rank (it bounds the step), with the
spread (slowest minus fastest) and the rank skew (slowest over the median rank) so stragglers
show without merging traces.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Mapping
from typing import Any

from aorta.collectors.base import RANK_TOKEN, Metrics, capture_status

_RANK_IN_NAME = re.compile(r"\.rank(\d+|pid\d+)\.")


def rank_name(stem: str, suffix: str) -> str:
    """`profile` + `.pstats` -> `profile.rank%aorta_rank%.pstats` (the shim fills the rank)."""
    return f"{stem}.rank{RANK_TOKEN}{suffix}"


def rank_of(filename: str) -> str | None:
    """`profile.rank3.pstats` -> "3"; None for a file not named by rank."""
    match = _RANK_IN_NAME.search(filename)
    return match.group(1) if match else None


def summarize_ranks(prefix: str, per_rank: Mapping[str, Metrics], time_key: str,
                    count_key: str) -> Metrics:
    """The run's figures from each rank's own metrics (`<prefix>_<time_key>`,
    `<prefix>_<count_key>`), rolled up, with the capture state of `rank_capture`."""
    figures = {rank: {k: m[f"{prefix}_{k}"] for k in (time_key, count_key) if f"{prefix}_{k}" in m}
               for rank, m in per_rank.items()}
    return rollup(prefix, figures, time_key, count_key) | rank_capture(prefix, per_rank)


def rollup(prefix: str, per_rank: Mapping[str, Mapping[str, float]], time_key: str,
           count_key: str | None) -> dict[str, Any]:
    """`<prefix>_<time_key>` = slowest rank, with `_spread_ms` and `_rank_skew`; `<count_key>`
    summed when every rank has it; `<prefix>_ranks` holds each rank's own figures."""
    times = {r: m[time_key] for r, m in per_rank.items() if time_key in m}
    out: dict[str, Any] = {f"{prefix}_ranks": {r: dict(m) for r, m in sorted(per_rank.items())},
                           f"{prefix}_rank_count": len(per_rank)}
    if times:
        slowest = max(times.values())
        median = statistics.median(times.values())
        out[f"{prefix}_{time_key}"] = slowest
        out[f"{prefix}_{time_key.removesuffix('_ms')}_spread_ms"] = slowest - min(times.values())
        if median > 0:
            out[f"{prefix}_rank_skew"] = slowest / median
    if count_key and per_rank and all(count_key in m for m in per_rank.values()):
        out[f"{prefix}_{count_key}"] = sum(int(m[count_key]) for m in per_rank.values())
    return out


#: Which rank's state a roll-up takes: the worst one (a rank with no figures beats one with some).
_SEVERITY = ("missing", "unparsed", "empty", "partial")


def rank_capture(prefix: str, per_rank: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The roll-up's `<prefix>_capture`: `ok` when every rank is, else the worst rank's state
    with its reason; a `partial` roll-up counts every rank's `<prefix>_skipped`."""
    states = {r: str(m.get(f"{prefix}_capture")) for r, m in per_rank.items()}
    bad = sorted((_SEVERITY.index(s) if s in _SEVERITY else -1, r)
                 for r, s in states.items() if s != "ok")
    if not bad:
        return capture_status(prefix, "ok")
    rank = bad[0][1]
    state = states[rank] if states[rank] in _SEVERITY else "unparsed"
    reason = f"rank {rank}: {per_rank[rank].get(f'{prefix}_capture_reason', '')}"
    skipped = sum(int(m.get(f"{prefix}_skipped", 0)) for m in per_rank.values())
    return capture_status(prefix, state, reason, skipped if state == "partial" else None)
