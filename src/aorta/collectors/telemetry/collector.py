"""`telemetry`: the GPU's state while each trial runs, so that a slow trial of a throttled GPU
is not read as a regression.

A sampler beside the payload (not an argv wrapper) reads every GPU the trial was pinned to (all
when unpinned) each `interval_ms` through NVML or AMD SMI (`sources.py`), counts the trial's own
processes and others', and writes `samples.json` once the payload has ended. It claims no
profiler resource. Which GPUs the figures cover, metrics, states: docs/collectors/telemetry.md.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import Field

from aorta.collectors.base import (Capability, Collector, CollectorOptions, Launch, Metrics,
                                   Sampler, TrialContext, TrialOutcome, capture_status)
from aorta.collectors.telemetry.sources import Source, open_source, reasons_of
from aorta.host.proc_table import in_trial
from aorta.store.files import write_json_file
from aorta.store.reading import RecordError, read_json_file

SAMPLES = "samples.json"
QUANTITIES = ("sm_clock_mhz", "mem_clock_mhz", "power_w", "temp_c", "gpu_util_pct", "mem_util_pct")
_MAX_SAMPLES = 20_000     # per device; past it, every other sample is dropped and the pace halves
_MAX_PIDS = 32            # other processes' pids kept per device


class TelemetryOptions(CollectorOptions):
    interval_ms: int = Field(100, ge=10, le=60_000, strict=True,
                             description="time between two samples of each GPU")


class _Recorder:
    """The sampling thread. A sample at the start and one at the stop are always taken, so a
    trial shorter than the interval still has two."""

    def __init__(self, source: Source, interval_s: float, target: tuple[Path, tuple[str, ...]]
                 ) -> None:
        self.source, self.interval_s, self.target = source, interval_s, target
        self.samples: list[list[dict[str, float]]] = [[] for _ in source.devices]
        self.other_pids: list[set[int]] = [set() for _ in source.devices]
        self.payload: tuple[int, int, str] | None = None
        self.ours: dict[int, bool] = {}      # pid -> whether the trial's, once /proc told
        self.t0 = time.monotonic()
        self.done = threading.Event()
        self._take()
        self.thread = threading.Thread(target=self._run, name="telemetry", daemon=True)
        self.thread.start()

    def payload_started(self, pid: int, start_ticks: int, token: str) -> None:
        self.payload = (pid, start_ticks, token)

    def _take(self) -> None:
        now = time.monotonic() - self.t0
        for position, kept in enumerate(self.samples):
            sample = {"t": round(now, 4), **self.source.read(position)}
            if (pids := self.source.processes(position)) is not None:
                sample |= self._count(pids, self.other_pids[position])
            kept.append(sample)
            if len(kept) > _MAX_SAMPLES:
                del kept[::2]
                self.interval_s *= 2

    def _count(self, pids: list[int], others_seen: set[int]) -> dict[str, float]:
        """The trial's processes and the others among `pids`; a pid /proc does not show is
        neither (it ended, or belongs to another pid namespace)."""
        own = other = 0
        for pid in pids:
            ours = self.ours.get(pid)
            # Before this thread knows the payload started (the warden's word may be on its way),
            # whose a pid is cannot be told yet: it is asked again in the next sample.
            if ours is None and self.payload is not None:
                if (ours := in_trial(pid, *self.payload)) is not None:
                    self.ours[pid] = ours
            if ours:
                own += 1
            elif ours is False:
                other += 1
                if len(others_seen) < _MAX_PIDS:
                    others_seen.add(pid)
        return {"own_procs": float(own), "other_procs": float(other)}

    def _run(self) -> None:
        while not self.done.wait(self.interval_s):
            self._take()

    def stop(self) -> None:
        self.done.set()
        self.thread.join()
        try:
            self._take()
            root, parts = self.target
            write_json_file(root, parts, SAMPLES, {
                "schema_version": 1, "vendor": self.source.vendor,
                "interval_ms": round(self.interval_s * 1000, 3),
                "devices": [{"index": d.index, "name": d.name, "uuid": d.uuid,
                             "other_pids": sorted(others), "samples": kept}
                            for d, kept, others in zip(self.source.devices, self.samples,
                                                       self.other_pids)]})
        finally:
            self.source.close()


class TelemetryCollector(Collector[TelemetryOptions]):
    name = "telemetry"
    wrap_rank = 100
    options_model = TelemetryOptions
    summary = "GPU clocks, power, temperature, utilisation and throttling during each trial"

    def wrap(self, launch: Launch, out_dir: Path, options: TelemetryOptions,
             ctx: TrialContext) -> Launch:
        return launch   # a sampler beside the payload: the launch is left alone

    def sample(self, out_dir: Path, options: TelemetryOptions, ctx: TrialContext,
               devices: Sequence[str] | None) -> Sampler:
        root = ctx.trial_dir.parents[2]
        parts = (*ctx.trial_dir.relative_to(root).parts, out_dir.name)
        return _Recorder(open_source(devices), options.interval_ms / 1000.0, (root, parts))

    def summarize(self, out_dir: Path, options: TelemetryOptions, outcome: TrialOutcome) -> Metrics:
        path = out_dir / SAMPLES
        if not path.exists():
            return capture_status(self.name, "missing", "no samples.json: the sampler did not "
                                                        "start (its reason is the capture's)")
        try:
            doc = read_json_file(path)
            return telemetry_metrics(doc) | {"telemetry_artifact_dir": str(out_dir)}
        except (OSError, RecordError, ValueError, TypeError, KeyError) as exc:
            return capture_status(self.name, "unparsed", f"{SAMPLES}: {exc}")

    def probe(self) -> Capability:
        try:
            source = open_source(None)
        except RuntimeError as exc:
            return Capability(self.name, False, reason=f"no GPU telemetry here ({exc})",
                              fix="pip install nvidia-ml-py (NVIDIA) or amdsmi (AMD), on a "
                                  "machine with the GPU driver")
        names = ", ".join(d.name for d in source.devices)
        source.close()
        return Capability(self.name, True, source.vendor, details={"devices": names})


def telemetry_metrics(doc: Any) -> Metrics:
    """Figures from a samples.json document ("devices": [{"samples": [{"t", q...}]}]).
    Raises ValueError when it is not one."""
    if not isinstance(doc, dict) or doc.get("schema_version") != 1:
        raise ValueError("not a version-1 telemetry samples document")
    devices = doc["devices"]
    used = [d for d in devices if any(_count(s, "own_procs") for s in _samples(d))]
    if not (samples := [s for d in used or devices for s in _samples(d)]):
        return capture_status("telemetry", "empty", "no sample was taken")
    out: Metrics = _attribution(devices, used)
    for q in QUANTITIES:
        if values := [float(s[q]) for s in samples if isinstance(s.get(q), (int, float))]:
            out |= {f"telemetry_{q}_min": min(values), f"telemetry_{q}_max": max(values),
                    f"telemetry_{q}_median": statistics.median(values)}
    masks = [int(s["throttle"]) for s in samples if isinstance(s.get("throttle"), (int, float))]
    if masks:
        throttled = [m for m in masks if reasons_of(m)]
        out["telemetry_throttled_fraction"] = len(throttled) / len(masks)
        seen = sorted({r for m in throttled for r in reasons_of(m)})
        out["telemetry_throttle_reasons"] = seen
        if throttled:
            out["telemetry_throttle_note"] = (
                f"the GPU slowed itself down ({', '.join(seen)}) in {len(throttled)} of "
                f"{len(masks)} samples: this trial's times are not comparable with an "
                f"unthrottled one")
    out["telemetry_samples"] = len(samples)
    out["telemetry_devices"] = [f"{d.get('index')}: {d.get('name')}" for d in devices]
    return out | capture_status("telemetry", "ok")


def _samples(device: Any) -> list[dict[str, Any]]:
    return [s for s in device["samples"] if isinstance(s, dict)]


def _count(sample: dict[str, Any], key: str) -> float:
    value = sample.get(key)
    return float(value) if isinstance(value, (int, float)) else 0.0


def _attribution(devices: list[Any], used: list[Any]) -> Metrics:
    """Which GPUs the figures are read over, and whether another program shared them."""
    if not used:
        if len(devices) < 2:
            return {}
        listed = any("own_procs" in s for d in devices for s in _samples(d))
        why = ("no process of this trial was seen on any of them (a payload that used no GPU, "
               "or process ids of another namespace)" if listed else
               "which of them ran the trial's processes is not known")
        return {"telemetry_device_note": (
            f"{why}: the figures cover all {len(devices)} sampled GPUs; pin trials to GPUs "
            f"with --gpus to read only theirs")}
    out: Metrics = {"telemetry_used_devices": [str(d.get("index")) for d in used]}
    busy = [s for d in used for s in _samples(d) if _count(s, "own_procs")]
    shared = {str(d.get("index")): [s for s in _samples(d) if _count(s, "own_procs")
                                    and _count(s, "other_procs")] for d in used}
    both = sum(len(v) for v in shared.values())
    out["telemetry_shared_fraction"] = both / len(busy)
    if both:
        pids = sorted({int(p) for d in used for p in d.get("other_pids") or []})
        gpus = ", ".join(f"GPU {gpu}" for gpu, hits in shared.items() if hits)
        out["telemetry_shared_note"] = (
            f"another program ran on {gpus} at the same time as this trial in {both} of "
            f"{len(busy)} samples (pids {', '.join(map(str, pids))}): this trial's times may "
            f"include the contention")
    return out
