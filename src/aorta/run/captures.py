"""What each collector made of a trial: its metrics and a typed `Capture`, from the
`<name>_capture`, `<name>_capture_reason` and `<name>_skipped` among its metrics and what its
sampler said. A collector that raises, returns no mapping or reports no valid state gets an
`unparsed` capture with the reason: a collector's bug never loses the trial's record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from aorta.collectors.attach_failure import ATTACH_ERROR_SUFFIX
from aorta.collectors.base import CollectorOptions, Sampler, TrialContext, TrialOutcome
from aorta.store.record_checks import CAPTURE_STATES, clean_metrics
from aorta.store.records import Capture


def summarize_collectors(collectors: Mapping[str, CollectorOptions], trial_dir: Path,
                         ctx: TrialContext, outcome: TrialOutcome,
                         failed: Mapping[str, str] | None = None
                         ) -> tuple[dict[str, Any], dict[str, Capture], list[str], dict[str, str]]:
    """(metrics, captures, warnings, attach errors) over the trial's collectors; those whose
    sampler `failed` (name -> why) get an `unparsed` capture. An attach error
    (`<name>_attach_error`) comes back apart: it makes the trial an `error`, not a `fail`."""
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


class Samplers:
    """The collectors that record beside the payload (`Collector.sample`). A sampler that
    fails to start or stop makes its capture `unparsed` with the reason; the trial runs on."""

    def __init__(self, collectors: Mapping[str, CollectorOptions], trial_dir: Path,
                 ctx: TrialContext, device: str | None) -> None:
        from aorta.collectors.registry import get

        devices = [d.strip() for d in device.split(",") if d.strip()] if device else None
        self.running: dict[str, Sampler] = {}
        self.errors: dict[str, str] = {}
        for name, options in collectors.items():
            try:
                sampler = get(name).sample(trial_dir / name, options, ctx, devices)
            except Exception as exc:   # the framework, not the collector, keeps the trial
                self.errors[name] = f"its sampler could not start: {type(exc).__name__}: {exc}"
                continue
            if sampler is not None:
                self.running[name] = sampler

    def payload_started(self, pid: int, start_ticks: int, token: str) -> None:
        self._each(lambda sampler: sampler.payload_started(pid, start_ticks, token))

    def stop(self) -> dict[str, str]:
        """Stop every sampler; collector -> why its capture is `unparsed`, for each that failed."""
        self._each(lambda sampler: sampler.stop())
        self.running = {}
        return dict(self.errors)

    def _each(self, call: Callable[[Sampler], None]) -> None:
        for name, sampler in list(self.running.items()):
            try:
                call(sampler)
            except Exception as exc:
                self.errors[name] = f"its sampler failed: {type(exc).__name__}: {exc}"
