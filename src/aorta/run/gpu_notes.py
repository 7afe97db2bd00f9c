"""Notes on the GPU's state from the `telemetry` collector's figures: a throttled GPU, or SM
clocks differing by more than `CLOCK_SPREAD` between things compared, make times not comparable.
Used by perf.md, the terminal summary, the report and `aorta compare`."""

from __future__ import annotations

from collections.abc import Mapping

CLOCK_SPREAD = 0.05
_CLOCK = "telemetry_sm_clock_mhz_median"
_THROTTLED = "telemetry_throttled_fraction"


def gpu_state_notes(medians: Mapping[str, Mapping[str, float]], what: str = "cells") -> list[str]:
    """`medians`: label (a cell, or `base:cell`) -> metric -> median over passing trials."""
    notes = []
    throttled = {label: m[_THROTTLED] for label, m in medians.items() if m.get(_THROTTLED)}
    if throttled:
        listed = ", ".join(f"{label} ({share:.0%} of samples)" for label, share in
                           throttled.items())
        notes.append(f"the GPU throttled during trials of {listed}: their times are slower "
                     f"than the GPU can run")
    clocks = {label: m[_CLOCK] for label, m in medians.items() if m.get(_CLOCK)}
    if len(clocks) > 1 and max(clocks.values()) > min(clocks.values()) * (1 + CLOCK_SPREAD):
        low = min(clocks, key=clocks.__getitem__)
        high = max(clocks, key=clocks.__getitem__)
        notes.append(f"the GPU's SM clock differed between {what}: median {clocks[low]:.0f} MHz "
                     f"in {low} against {clocks[high]:.0f} MHz in {high} (more than "
                     f"{CLOCK_SPREAD:.0%}): time differences between them are not all the code's")
    return notes
