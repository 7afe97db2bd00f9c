"""One trial, start to finish: build the launch, let collectors wrap it, run it, read the
artifacts, decide the verdict, write `result.json`. A failure is a record, never an exception.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from aorta.collectors.base import (RANK_TOKEN, CollectorOptions, Launch, TrialContext,
                                   TrialOutcome)
from aorta.envsnap import looks_secret
from aorta.errors import SetupError
from aorta.results import TrialResult, atomic_write_text, write_json
from aorta.run.process import ProcessResult, run_process

__all__ = ["TrialSpec", "run_trial", "child_environment", "CLEAN_ENV_KEEP", "wrap_launch"]

#: What `env_passthrough_mode: clean` keeps from the caller's environment.
CLEAN_ENV_KEEP = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM",
                  "TMPDIR", "TZ", "SHELL")
_TAIL_BYTES = 4096


@dataclass(frozen=True)
class TrialSpec:
    """Everything one trial needs; no shared state with other trials."""

    cell: str
    index: int
    trial_dir: Path
    command: tuple[str, ...]
    env: Mapping[str, str]                       # recipe env, then the cell's variants
    collectors: Mapping[str, CollectorOptions]   # outermost first
    env_mode: str = "inherit"
    timeout: float | None = None
    grace: float = 10.0
    device_env: Mapping[str, str] = field(default_factory=dict)   # a GPU pin, if any
    device: str | None = None
    baseline: bool = False    # a trial with no collector, to measure the collectors' overhead


def child_environment(mode: str, caller: Mapping[str, str],
                      overlay: Mapping[str, str]) -> dict[str, str]:
    """The environment a trial's child starts from, before collectors add theirs."""
    if mode == "clean":
        base = {k: caller[k] for k in CLEAN_ENV_KEEP if k in caller}
    else:
        base = dict(caller)
    base.update(overlay)
    return base


def wrap_launch(spec: TrialSpec, base_env: Mapping[str, str]) -> Launch:
    """The command after every collector wrapped it (innermost first). May raise SetupError.

    Under a multi-rank launcher (torchrun, srun, mpirun), per-process collectors wrap each
    rank's command, behind the per-rank shim that gives every rank its own file names."""
    from aorta.collectors.child_import import importable_by_child
    from aorta.collectors.rank_launch import split_rank_launch
    from aorta.collectors.registry import get

    overlay = {**spec.env, **spec.device_env}
    names = list(spec.collectors)
    per_process = [n for n in names if get(n).per_process]
    ranks = split_rank_launch(spec.command) if per_process else None
    ctx = TrialContext(spec.cell, spec.index, spec.trial_dir, base_env)
    if ranks is None:
        launch = Launch(spec.command, overlay)
        for name in reversed(names):
            launch = get(name).wrap(launch, spec.trial_dir / name, spec.collectors[name], ctx)
        return launch
    rank_ctx = TrialContext(spec.cell, spec.index, spec.trial_dir, base_env, per_rank=True)
    inner = Launch(ranks.inner, overlay)
    for name in reversed(per_process):
        inner = get(name).wrap(inner, spec.trial_dir / name, spec.collectors[name], rank_ctx)
    templated = [arg for key, value in inner.env.items() if RANK_TOKEN in value
                 for arg in ("--env", key)]
    shim = (sys.executable, "-m", "aorta.launchers.per_rank", *templated, "--")
    launch = importable_by_child(Launch(ranks.prefix + shim + inner.argv, inner.env, inner.unset),
                                 ctx, (), SetupError, "install aorta (pip install -e .)")
    for name in reversed([n for n in names if n not in per_process]):
        launch = get(name).wrap(launch, spec.trial_dir / name, spec.collectors[name], ctx)
    return launch


def run_trial(spec: TrialSpec, caller_env: Mapping[str, str],
              cancel: threading.Event | None = None) -> TrialResult:
    """Run the trial described by `spec` and write its `result.json` (atomically, last).

    When `cancel` is set mid-trial the payload's group is killed and `Cancelled` propagates:
    the trial stays incomplete, so a resumed run runs it again."""
    from aorta.collectors.registry import get

    _fresh_dir(spec.trial_dir, list(spec.collectors))
    overlay = {**spec.env, **spec.device_env}
    base_env = child_environment(spec.env_mode, caller_env, overlay)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    try:
        launch = wrap_launch(spec, base_env)
    except SetupError as exc:
        result = _record(spec, Launch(spec.command, overlay), None, started, {}, [],
                         setup_error=str(exc))
        write_json(spec.trial_dir / "result.json", result.to_json())
        return result

    env = {k: v for k, v in base_env.items() if k not in launch.unset}
    env.update(launch.env)
    _write_rerun(spec, launch)
    proc = run_process(launch.argv, env, spec.trial_dir / "stdout.log",
                       spec.trial_dir / "stderr.log", spec.timeout, spec.grace, cancel=cancel)
    outcome = TrialOutcome(proc.exit_code, proc.signal, proc.timed_out, proc.launched,
                           spec.trial_dir / "stderr.log", base_env)
    metrics: dict[str, object] = {}
    warnings: list[str] = []
    ctx = TrialContext(spec.cell, spec.index, spec.trial_dir, base_env)
    for name, options in spec.collectors.items():
        collector = get(name)
        metrics.update(collector.resolved(options, ctx))
        metrics.update(collector.summarize(spec.trial_dir / name, options, outcome))
        warnings += [f"aorta: {name}: {value}" for key, value in metrics.items()
                     if key.startswith(f"{name}_") and key.endswith("_note") and value]
        state = metrics.get(f"{name}_capture")
        if state != "ok":
            reason = metrics.get(f"{name}_capture_reason", "no reason given")
            warnings.append(f"aorta: {name} capture is {state}: {reason}")
    result = _record(spec, launch, proc, started, metrics, warnings)
    write_json(spec.trial_dir / "result.json", result.to_json())
    return result


def _fresh_dir(trial_dir: Path, collectors: list[str]) -> None:
    """An empty trial dir with an empty dir per collector: a rerun never reads stale files."""
    if trial_dir.is_symlink():
        trial_dir.unlink()
    elif trial_dir.exists():
        shutil.rmtree(trial_dir)
    trial_dir.mkdir(parents=True)
    for name in collectors:
        (trial_dir / name).mkdir()


def _verdict(proc: ProcessResult | None, setup_error: str | None) -> tuple[str, str]:
    if setup_error is not None:
        return "error", f"collector setup failed: {setup_error}"
    assert proc is not None
    if proc.exec_error is not None:
        return "error", f"{proc.exec_error} (exit {proc.exit_code})"
    if proc.timed_out:
        return "error", "timed out; its process group was terminated"
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


def _record(spec: TrialSpec, launch: Launch, proc: ProcessResult | None, started: str,
            metrics: dict[str, object], warnings: list[str],
            setup_error: str | None = None) -> TrialResult:
    verdict, reason = _verdict(proc, setup_error)
    if proc is not None and proc.timed_out:
        reason = f"timed out after {spec.timeout:g} s; its process group was terminated"
    overlay = {k: ("<redacted>" if looks_secret(k) else v) for k, v in launch.env.items()}
    return TrialResult(
        cell=spec.cell, index=spec.index, verdict=verdict, reason=reason,  # type: ignore[arg-type]
        argv=list(launch.argv), command=list(spec.command), env_overlay=overlay,
        env_unset=sorted(launch.unset),
        exit_code=proc.exit_code if proc else None, signal=proc.signal if proc else None,
        timed_out=proc.timed_out if proc else False, launched=proc.launched if proc else False,
        wall_s=proc.wall_s if proc and proc.launched else None,
        cpu_user_s=proc.cpu_user_s if proc else None, cpu_sys_s=proc.cpu_sys_s if proc else None,
        max_rss_mib=proc.max_rss_mib if proc else None, started_at=started,
        host=socket.gethostname(), metrics=dict(metrics), warnings=warnings,
        stderr_tail=None if verdict == "pass" else _tail(spec.trial_dir / "stderr.log"),
        device=spec.device, baseline=spec.baseline,
    )


def _tail(path: Path) -> str | None:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - _TAIL_BYTES))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return None


def _write_rerun(spec: TrialSpec, launch: Launch) -> None:
    """`rerun.sh`: this trial's exact launch, runnable without aorta."""
    lines = ["#!/bin/sh", "# Reproduces this trial outside aorta: the same argv and environment.",
             f"cd {shlex.quote(os.getcwd())} || exit 1"]
    lines += [f"mkdir -p {shlex.quote(str(spec.trial_dir / n))}" for n in spec.collectors]
    env_args = ["env"]
    if spec.env_mode == "clean":
        env_args.append("-i")
        env_args += [f'{k}="${{{k}}}"' for k in CLEAN_ENV_KEEP]
    env_args += [f"-u {shlex.quote(name)}" for name in sorted(launch.unset)]
    for key, value in launch.env.items():
        # A credential is taken from the caller's environment, never written down.
        env_args.append(f'{key}="${{{key}:?set {key}}}"' if looks_secret(key)
                        else f"{key}={shlex.quote(value)}")
    command = " ".join(shlex.quote(a) for a in launch.argv)
    lines.append("exec " + " ".join(env_args) + " " + command)
    atomic_write_text(spec.trial_dir / "rerun.sh", "\n".join(lines) + "\n", mode=0o755)
