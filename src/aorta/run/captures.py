"""What each collector made of a trial: its metrics and a typed `Capture`.

Collectors publish their state as `<name>_capture` (+ `<name>_capture_reason`, and
`<name>_skipped` for a `partial` one) among their metrics; here it becomes the trial's typed
`captures[name]`, together with what the collector
resolved (`proton_backend` when `auto` was asked). A collector that raises, returns something
that is not a mapping, or reports no valid state gets an `unparsed` capture with the reason:
the trial's record is never lost to a collector's bug. A collector whose launcher could not
attach inside the payload's process says so as `<name>_attach_error`; it is handed back apart,
since it makes the trial an `error` (nothing was measured), not a `fail`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aorta.collectors.attach_failure import ATTACH_ERROR_SUFFIX
from aorta.collectors.base import CollectorOptions, TrialContext, TrialOutcome
from aorta.store.record_checks import CAPTURE_STATES, clean_metrics
from aorta.store.records import Capture


def summarize_collectors(collectors: Mapping[str, CollectorOptions], trial_dir: Path,
                         ctx: TrialContext, outcome: TrialOutcome,
                         failed: Mapping[str, str] | None = None
                         ) -> tuple[dict[str, Any], dict[str, Capture], list[str], dict[str, str]]:
    """(metrics, captures, warnings, attach errors) over every collector of the trial.
    `failed` names the collectors whose sampler failed, and why: their capture is `unparsed`.
    The attach errors map a collector to why it could not attach inside the payload."""
    metrics: dict[str, Any] = {}
    captures: dict[str, Capture] = {}
    warnings: list[str] = []
    unattached: dict[str, str] = {}
    for name, options in collectors.items():
        if failed and name in failed:
            captures[name] = Capture("unparsed", failed[name])
            continue
        own, capture, notes = _one(name, options, trial_dir / name, ctx, outcome)
        why = own.pop(f"{name}{ATTACH_ERROR_SUFFIX}", None)
        if isinstance(why, str) and why:
            unattached[name] = why
        metrics.update(own)
        captures[name] = capture
        warnings += notes
    return metrics, captures, warnings, unattached


def _one(name: str, options: CollectorOptions, out_dir: Path, ctx: TrialContext,
         outcome: TrialOutcome) -> tuple[dict[str, Any], Capture, list[str]]:
    from aorta.collectors.registry import get

    collector = get(name)
    try:
        resolved = collector.resolved(options, ctx)
        raw = collector.summarize(out_dir, options, outcome)
        if not isinstance(raw, Mapping) or not isinstance(resolved, Mapping):
            raise TypeError(f"summarize returned {type(raw).__name__}, not a mapping")
    except Exception as exc:   # the framework, not each collector, keeps the record
        return {}, Capture("unparsed", f"the {name} collector failed while reading its "
                                       f"artifacts: {type(exc).__name__}: {exc}"), []
    metrics = dict(raw)
    state = metrics.pop(f"{name}_capture", None)
    reason = metrics.pop(f"{name}_capture_reason", None)
    skipped = metrics.pop(f"{name}_skipped", None)
    if not (isinstance(skipped, int) and not isinstance(skipped, bool) and skipped >= 0):
        skipped = None
    if state not in CAPTURE_STATES:
        state, reason = "unparsed", f"the {name} collector reported no valid capture state " \
                                    f"({state!r})"
    metrics, dropped = clean_metrics(metrics)
    notes = [f"aorta: {name}: {value}" for key, value in metrics.items()
             if key.startswith(f"{name}_") and key.endswith("_note") and value]
    notes += [f"aorta: {name}: metric {key} was left out: not a finite JSON value"
              for key in dropped]
    kept = {str(k): str(v) for k, v in resolved.items() if v is not None}
    return metrics, Capture(str(state), str(reason) if reason else None, kept, skipped), notes
