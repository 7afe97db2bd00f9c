"""Executors: where and how many trials run at once. The sweep loop hands them trial specs.

- `SerialExecutor`: one trial at a time, in this process (the default).
- `DeviceExecutor`: up to one trial per GPU at once, each pinned to its GPU through the
  variable its vendor honours (CUDA_VISIBLE_DEVICES on NVIDIA, ROCR_VISIBLE_DEVICES on AMD,
  which every HIP program and Proton's queue-intercepting backends accept). Trials never share
  a GPU; results land in each trial's own directory, so their order on disk stays stable.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Protocol

from aorta.recipe.schema import ExecutorConfig
from aorta.run.trial import TrialSpec, run_trial
from aorta.run.warden import Warden
from aorta.store.records import TrialResult

OnStart = Callable[[TrialSpec], None]
OnDone = Callable[[TrialResult], None]
RunTrial = Callable[..., TrialResult]


class Executor(Protocol):
    def run(self, specs: Sequence[TrialSpec], caller_env: Mapping[str, str],
            on_start: OnStart, on_done: OnDone, warden: Warden | None = None) -> None:
        """Run every spec; raise KeyboardInterrupt (after cleaning up) when interrupted.
        `warden` starts and contains the payloads of trials run on this host."""


class SerialExecutor:
    def __init__(self, runner: RunTrial = run_trial) -> None:
        self.runner = runner

    def run(self, specs: Sequence[TrialSpec], caller_env: Mapping[str, str],
            on_start: OnStart, on_done: OnDone, warden: Warden | None = None) -> None:
        for spec in specs:
            on_start(spec)
            on_done(self.runner(spec, caller_env, warden=warden))


class DeviceExecutor:
    """One worker per device; a trial takes a free device, runs pinned to it, gives it back."""

    def __init__(self, devices: Sequence[str], variable: str,
                 runner: RunTrial = run_trial) -> None:
        if not devices:
            raise ValueError("DeviceExecutor needs at least one device")
        if len(set(devices)) != len(devices):
            raise ValueError(f"a device is listed twice in {list(devices)}")
        self.devices = list(devices)
        self.variable = variable
        self.runner = runner

    def run(self, specs: Sequence[TrialSpec], caller_env: Mapping[str, str],
            on_start: OnStart, on_done: OnDone, warden: Warden | None = None) -> None:
        free: queue.Queue[str] = queue.Queue()
        for device in self.devices:
            free.put(device)
        cancel = threading.Event()
        report = threading.Lock()   # progress callbacks are not thread-safe

        def one(spec: TrialSpec) -> None:
            if cancel.is_set():
                return
            device = free.get()
            try:
                pinned = replace(spec, device=device,
                                 device_env={**spec.device_env, self.variable: device})
                with report:
                    on_start(pinned)
                result = self.runner(pinned, caller_env, cancel=cancel, warden=warden)
                with report:
                    on_done(result)
            finally:
                free.put(device)

        pool = ThreadPoolExecutor(max_workers=len(self.devices), thread_name_prefix="trial")
        futures = [pool.submit(one, spec) for spec in specs]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in done:
                future.result()
        except BaseException:
            cancel.set()   # running trials kill their process groups and return
            for future in futures:
                future.cancel()
            pool.shutdown(wait=True)
            raise
        pool.shutdown(wait=True)


def make_executor(config: ExecutorConfig) -> Executor:
    """The executor a recipe's `executor:` block (after command-line overrides) asks for."""
    from aorta.run.devices import parse_gpus, pin_variable

    if config.kind == "slurm":
        from aorta.run.slurm import SlurmExecutor

        return SlurmExecutor(config)
    if config.gpus is None:
        return SerialExecutor()
    return DeviceExecutor(parse_gpus(config.gpus), pin_variable())
