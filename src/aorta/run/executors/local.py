"""The local executor (`kind: local`, the default): trials run on this host, one at a time, or
with `gpus` one per GPU at once, each pinned to its own GPU (`gpus.pin_variable`). Each trial
writes its own directory, so the order on disk stays stable."""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import replace

from pydantic import field_validator

from aorta.base.errors import SetupError
from aorta.collectors.base import Launch
from aorta.collectors.child_python import check_import
from aorta.collectors.registry import capability, get, plugin_fault
from aorta.run.executors.base import Executor, ExecutorOptions, OnDone, OnStart
from aorta.run.executors.gpus import check_device_ids, pin_variable, resolve_gpus
from aorta.run.launch import child_environment
from aorta.run.plan import Plan
from aorta.run.trial import TrialSpec, run_trial
from aorta.run.warden import Warden


class LocalOptions(ExecutorOptions):
    kind: str = "local"
    #: "all", "0,2" or a list: run up to one trial per GPU at once.
    gpus: str | list[int | str] | None = None

    _check_gpus = field_validator("gpus", mode="before")(check_device_ids)


class LocalExecutor(Executor):
    kind = "local"
    options_model = LocalOptions

    def __init__(self, options: ExecutorOptions) -> None:
        super().__init__(options)
        self._cancel = threading.Event()

    def preflight(self, plan: Plan, first: TrialSpec, caller_env: Mapping[str, str]
                  ) -> tuple[Launch, list[str]]:
        """Wrapping first (a command a collector can never take is refused with its own fix
        before the machine's checks name a missing tool), then each collector's probe, then
        the interpreter each cell's command runs, then the GPUs asked for."""
        launch, notes = super().preflight(plan, first, caller_env)
        for name in plan.collectors:
            cap = capability(name)
            if not cap.usable:
                fix = f"; {cap.fix}" if cap.fix else ""
                raise SetupError(f"collector {name} cannot measure on this machine: "
                                 f"{cap.reason}{fix}")
        check_child_imports(plan, caller_env)
        _ = self.devices    # listed and checked here, before any trial
        return launch, notes

    @functools.cached_property
    def devices(self) -> list[str] | None:
        """The devices trials are pinned to, checked against those here (listed once), or None."""
        gpus = getattr(self.options, "gpus", None)
        return None if gpus is None else resolve_gpus(gpus)

    def launch(self, specs: Sequence[TrialSpec], caller_env: Mapping[str, str],
               on_start: OnStart, on_done: OnDone, warden: Warden) -> None:
        devices = self.devices
        if devices is None:
            for spec in specs:
                on_start(spec)
                on_done(run_trial(spec, caller_env, warden=warden))
        else:
            self._on_devices(devices, specs, caller_env, on_start, on_done, warden)

    def cancel(self) -> None:
        self._cancel.set()   # running trials kill their process groups and return

    def _on_devices(self, devices: list[str], specs: Sequence[TrialSpec],
                    caller_env: Mapping[str, str], on_start: OnStart, on_done: OnDone,
                    warden: Warden) -> None:
        """One worker per device: a trial takes a free device, runs pinned to it, gives it back."""
        free: queue.Queue[str] = queue.Queue()
        for device in devices:
            free.put(device)
        report = threading.Lock()   # progress callbacks are not thread-safe
        variable = pin_variable()

        def one(spec: TrialSpec) -> None:
            if self._cancel.is_set():
                return
            device = free.get()
            try:
                pinned = replace(spec, device=device,
                                 device_env={**spec.device_env, variable: device})
                with report:
                    on_start(pinned)
                result = run_trial(pinned, caller_env, cancel=self._cancel, warden=warden)
                with report:
                    on_done(result)
            finally:
                free.put(device)

        pool = ThreadPoolExecutor(max_workers=len(devices), thread_name_prefix="trial")
        futures = [pool.submit(one, spec) for spec in specs]
        try:
            done, _ = wait(futures, return_when=FIRST_EXCEPTION)
            for future in done:
                future.result()
        except BaseException:
            self.cancel()
            raise
        finally:    # trials not yet started are dropped; running ones end, then are waited for
            pool.shutdown(wait=True, cancel_futures=True)


def check_child_imports(plan: Plan, caller_env: Mapping[str, str]) -> None:
    """`SetupError` when a collector's launcher cannot import its profiler in the interpreter a
    cell's command runs (else every torch trial would end as an error after it started). A
    check that cannot finish (a timeout) refuses nothing: the trial's record will say why."""
    for cell in plan.cells:
        env = child_environment(plan.recipe.env_passthrough_mode, caller_env,
                                {**plan.recipe.env, **cell.env})
        argv = plan.command + cell.args
        for name, options in plan.collectors.items():
            collector = get(name)
            with plugin_fault(name, "interpreter lookup"):
                modules = collector.child_imports(options)
                python = collector.child_python(argv, env) if modules else None
            for module in modules if python else ():
                found = check_import(python or "", module, env)
                if found.ok is False:
                    raise SetupError(
                        f"collector {name} cannot attach: {module} is not importable by "
                        f"{python} (the interpreter the command {argv[0]!r} runs on the "
                        f"trial's PATH{f', cell {cell.name}' if len(plan.cells) > 1 else ''})"
                        f": {found.problem}; install {module.split('.')[0]} into that "
                        f"interpreter, or give the command the Python that has it "
                        f"(-- /path/to/python ...), or use --collect none")
