"""One trial, start to finish: launch, collectors' wrapping, run, artifacts, verdict,
`result.json`. A failure is a record, never an exception (except a full disk or a cancelled
trial, which leave the trial incomplete to run again)."""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from aorta.base.errors import DiskFullError, SetupError
from aorta.base.names import printable
from aorta.base.redaction import Redactor
from aorta.collectors.base import CollectorOptions, Launch, TrialContext, TrialOutcome
from aorta.host.proc_table import boot_id, proc_info
from aorta.run.captures import Samplers, summarize_collectors
from aorta.run.launch import child_environment, launch_with_env_file, wrap_launch
from aorta.run.process import DEFAULT_LOG_LIMIT, Cancelled, ProcessResult, run_process
from aorta.run.rerun import rerun_script
from aorta.run.retain import prune_trial
from aorta.run.stderr_line import ON_STDOUT, TAIL_BYTES, telling_stream
from aorta.run.warden import Handle, Warden
from aorta.store.files import short_of_space
from aorta.store.layout import trial_name
from aorta.store.reading import read_tail
from aorta.store.records import Capture, TrialResult
from aorta.store.run_dir import RunStore


@dataclass(frozen=True)
class TrialSpec:
    """Everything one trial needs; no shared state with other trials."""

    cell: str
    index: int
    run_dir: Path
    command: tuple[str, ...]
    env: Mapping[str, str]                       # recipe env, then the cell's variants
    collectors: Mapping[str, CollectorOptions]   # outermost first
    env_mode: str = "inherit"
    timeout: float | None = None
    grace: float = 10.0
    device_env: Mapping[str, str] = field(default_factory=dict)   # a GPU pin, if any
    device: str | None = None
    baseline: bool = False    # a trial with no collector, to measure the collectors' overhead
    max_log_bytes: int = DEFAULT_LOG_LIMIT
    retain: Mapping[str, str] = field(default_factory=dict)   # verdict -> level; else full

    @property
    def name(self) -> str:
        return trial_name(self.index, self.baseline)

    @property
    def trial_dir(self) -> Path:
        return self.run_dir / "cells" / self.cell / self.name

    @property
    def key(self) -> str:
        """`cells/<cell>/<name>`: the trial's place in the run directory."""
        return f"cells/{self.cell}/{self.name}"


def trial_redactor(spec: TrialSpec, caller_env: Mapping[str, str]) -> Redactor:
    """A redactor that knows every secret among the trial's inputs."""
    return Redactor.for_inputs([caller_env, spec.env, spec.device_env], [spec.command])


def spec_launch(spec: TrialSpec, base_env: Mapping[str, str]) -> Launch:
    """The trial's launch after every collector wrapped it. May raise SetupError."""
    ctx = TrialContext(spec.cell, spec.index, spec.trial_dir, base_env)
    return wrap_launch(spec.command, {**spec.env, **spec.device_env}, spec.trial_dir,
                       spec.collectors, ctx)


def run_trial(spec: TrialSpec, caller_env: Mapping[str, str],
              cancel: threading.Event | None = None, warden: Warden | None = None
              ) -> TrialResult:
    """Run the trial described by `spec` and write its `result.json` (atomically, last). When
    `cancel` is set mid-trial everything the payload started is killed and `Cancelled`
    propagates: the trial stays incomplete, so a resumed run runs it again."""
    if warden is None:
        with Warden.start() as own:
            return run_trial(spec, caller_env, cancel, own)
    redactor = trial_redactor(spec, caller_env)
    store = RunStore(spec.run_dir, redactor)
    trial_dir = store.fresh_trial_dir(spec.cell, spec.name, list(spec.collectors))
    base_env = child_environment(spec.env_mode, caller_env, {**spec.env, **spec.device_env})
    started = utc_now()
    try:
        launch = spec_launch(spec, base_env)
    except SetupError as exc:
        result = _record(spec, redactor, Launch(spec.command, {**spec.env, **spec.device_env}),
                         None, started, setup_error=f"collector setup failed: {exc}")
        return _finish(store, spec, result)
    env = {k: v for k, v in base_env.items() if k not in launch.unset}
    env.update(launch.env)
    if spec.env_mode == "file":
        try:
            launch = launch_with_env_file(store, spec.cell, spec.name, launch, env)
        except ValueError as exc:
            result = _record(spec, redactor, launch, None, started,
                             setup_error=f"env_passthrough_mode file: {exc}; unset it for the "
                                         f"sweep, or use env_passthrough_mode inherit")
            return _finish(store, spec, result)
        env.update(launch.env)
    store.write_trial_file(spec.cell, spec.name, "rerun.sh",
                           rerun_script(launch, [str(trial_dir / n) for n in spec.collectors],
                                        spec.env_mode, redactor), executable=True)
    ctx = TrialContext(spec.cell, spec.index, trial_dir, base_env)
    proc, sampler_errors = _run_payload(spec, store, launch.argv, env, ctx, cancel, warden)
    if cancel is not None and cancel.is_set():
        raise Cancelled()   # it ended as the sweep was stopped (by the signal, maybe): no result
    outcome = TrialOutcome(proc.exit_code, proc.signal, proc.timed_out, proc.launched,
                           trial_dir / "stderr.log", base_env)
    metrics, captures, warnings, unattached = summarize_collectors(
        spec.collectors, trial_dir, ctx, outcome, sampler_errors)
    result = _record(spec, redactor, launch, proc, started, metrics, captures,
                     warnings + _process_warnings(proc), unattached=unattached)
    _refuse_if_disk_spoiled(spec, proc, result)
    return _finish(store, spec, result)


def _refuse_if_disk_spoiled(spec: TrialSpec, proc: ProcessResult, result: TrialResult) -> None:
    """`DiskFullError`, and no record (resume runs the trial again), when the disk may have
    shaped the outcome: a log could not be written; the filesystem is full after the trial (a
    profile cut short may still parse); or a trial not clean says "No space left on device" on
    stderr (its profiler's or its own words: a `fail` there would be the disk's)."""
    for name, log in proc.logs.items():
        if log.problem:
            raise DiskFullError.at(f"writing {spec.trial_dir / name}.log", log.problem.lower())
    free = short_of_space(spec.trial_dir)
    if free is not None:
        raise DiskFullError.at(f"under {spec.trial_dir} ({free} bytes left)")
    if result.verdict == "pass" and all(c.state == "ok" for c in result.captures.values()):
        return
    tail = read_tail(spec.trial_dir / "stderr.log", TAIL_BYTES) or ""
    for line in reversed(tail.splitlines()):
        cause = next((words for words in DiskFullError.FULL if words in line.lower()), None)
        if cause:
            raise DiskFullError.at(f"in trial {spec.cell}/{spec.name}, whose stderr says "
                                   f"{printable(line.strip(), 160)}", cause)


def _run_payload(spec: TrialSpec, store: RunStore, argv: tuple[str, ...], env: dict[str, str],
                 ctx: TrialContext, cancel: threading.Event | None, warden: Warden
                 ) -> tuple[ProcessResult, dict[str, str]]:
    """Run the payload with the samplers around it, marked as running (`.running.json`, by
    which a later driver finds what a killed one left) while it runs."""
    driver = proc_info(os.getpid())

    def mark(handle: Handle) -> None:
        store.mark_running(spec.cell, spec.name, {
            "pid": handle.pid, "start_ticks": handle.start_ticks, "token": handle.token,
            "host": socket.gethostname(), "boot_id": boot_id(), "driver": os.getpid(),
            "driver_start_ticks": driver.start_ticks if driver else None})
        samplers.payload_started(handle.pid, handle.start_ticks, handle.token)

    samplers = Samplers(spec.collectors, ctx.trial_dir, ctx, spec.device)
    try:
        proc = run_process(argv, env, ctx.trial_dir / "stdout.log",
                           ctx.trial_dir / "stderr.log", spec.timeout, spec.grace,
                           cancel=cancel, warden=warden, log_limit=spec.max_log_bytes,
                           secrets=store.redactor.secrets, on_started=mark)
    finally:
        sampler_errors = samplers.stop()
        store.clear_running(spec.cell, spec.name)   # stopped or not, its processes are gone
    return proc, sampler_errors


def _finish(store: RunStore, spec: TrialSpec, result: TrialResult) -> TrialResult:
    """Apply the recipe's retention for this verdict, then write `result.json` (last: it
    marks the trial complete and records what retention removed)."""
    level = spec.retain.get(result.verdict, "full")
    if level != "full":
        retention = prune_trial(store.root, ("cells", spec.cell, spec.name), level)
        result = replace(result, retention=retention)
    store.write_trial(result)
    return result


def utc_now() -> str:
    """Now, as records write it: `2026-12-04T10:00:00+00:00`."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _process_warnings(proc: ProcessResult) -> list[str]:
    out = []
    if proc.leftovers:
        out.append(f"aorta: killed {proc.leftovers} process(es) the payload left running")
    if proc.survivors:
        out.append(f"aorta: {proc.survivors} process(es) of this trial could not be killed")
    for name, log in proc.logs.items():
        if log.cut:
            out.append(f"aorta: {name}.log keeps {log.kept} of the {log.written} bytes written "
                       f"(its head and tail; the cap is max_log_mib)")
    return out


def _verdict(proc: ProcessResult | None, setup_error: str | None,
             unattached: Mapping[str, str], timeout: float | None) -> tuple[str, str]:
    if setup_error is not None:
        return "error", setup_error
    assert proc is not None
    if proc.timed_out:
        return "error", f"timed out after {timeout:g} s; its process group was terminated"
    if proc.exec_error is not None:
        return "error", f"{proc.exec_error} (exit {proc.exit_code})"
    if unattached:
        return "error", "; ".join(f"the {name} collector could not attach inside the payload's "
                                  f"process: {why}" for name, why in unattached.items())
    if proc.signal is not None:
        return "fail", f"killed by {_signal_name(proc.signal)}"
    if proc.exit_code != 0:
        return "fail", f"exit code {proc.exit_code}"
    return "pass", "exit code 0"


def _signal_name(number: int) -> str:
    try:
        return f"{signal.Signals(number).name} (signal {number})"
    except ValueError:
        return f"signal {number}"


def _record(spec: TrialSpec, redactor: Redactor, launch: Launch, proc: ProcessResult | None,
            started: str, metrics: dict[str, object] | None = None,
            captures: dict[str, Capture] | None = None, warnings: list[str] | None = None,
            setup_error: str | None = None, unattached: Mapping[str, str] | None = None
            ) -> TrialResult:
    verdict, reason = _verdict(proc, setup_error, unattached or {}, spec.timeout)
    tail = None if verdict == "pass" else read_tail(spec.trial_dir / "stderr.log", TAIL_BYTES)
    stream, said = telling_stream(spec.trial_dir, tail) if verdict == "fail" else ("", None)
    if said:    # the payload's own last word: why it failed, without opening its logs
        reason = f"{reason}: {said}" + (ON_STDOUT if stream == "stdout" else "")
    ran: dict[str, Any] = {}
    if proc is not None:
        ran = {key: getattr(proc, key) for key in ("exit_code", "signal", "timed_out", "launched",
                                                   "cpu_user_s", "cpu_sys_s", "max_rss_mib")}
        ran.update(logs=dict(proc.logs), wall_s=proc.wall_s if proc.launched else None)
    return TrialResult(
        cell=spec.cell, index=spec.index, verdict=verdict, reason=reason,  # type: ignore[arg-type]
        argv=redactor.argv(launch.argv), command=redactor.argv(spec.command),
        env_overlay=redactor.env(launch.env), env_unset=sorted(launch.unset),
        started_at=started, host=socket.gethostname(), metrics=dict(metrics or {}),
        captures=dict(captures or {}), warnings=list(warnings or []), stderr_tail=tail,
        device=spec.device, baseline=spec.baseline, **ran)
