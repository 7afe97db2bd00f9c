"""Collectors that record beside the payload (`Collector.sample`, e.g. GPU telemetry): started
just before the payload, stopped just after it, for every collector alike. A sampler that fails
to start or stop makes its collector's capture `unparsed` with the reason; the trial runs on."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from aorta.collectors.base import CollectorOptions, Sampler, TrialContext


class Samplers:
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
        for name, sampler in list(self.running.items()):
            try:
                sampler.payload_started(pid, start_ticks, token)
            except Exception as exc:
                self.errors[name] = f"its sampler failed: {type(exc).__name__}: {exc}"

    def stop(self) -> dict[str, str]:
        """Stop every sampler; collector -> why its capture is `unparsed`, for those that
        failed to start or stop."""
        for name, sampler in self.running.items():
            try:
                sampler.stop()
            except Exception as exc:
                self.errors[name] = f"its sampler failed: {type(exc).__name__}: {exc}"
        self.running = {}
        return dict(self.errors)
