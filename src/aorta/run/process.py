"""Running one payload the way a trial must: no shell, a session of its own, capped logs, the
kernel's accounting of its cost. The trial warden (run/warden_server.py) starts and reaps it and
kills what it leaves behind; this module adds the driver's clock: timeout and cancellation."""

from __future__ import annotations

import errno
import os
import secrets as token_source
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from aorta.base.errors import WardenLost
from aorta.host.proc_table import TOKEN_VARIABLE
from aorta.run.warden import Handle, SpawnFailed, Warden
from aorta.store.records import LogInfo

_POLL_CANCEL_S = 0.1
DEFAULT_LOG_LIMIT = 32 << 20


class Cancelled(Exception):
    """Another thread asked the running trials to stop (Ctrl-C with parallel trials)."""


@dataclass(frozen=True)
class ProcessResult:
    """How the process ended. Times in seconds, memory in MiB."""

    launched: bool
    exit_code: int | None          # None when killed by a signal or never started
    signal: int | None
    timed_out: bool
    wall_s: float
    cpu_user_s: float | None
    cpu_sys_s: float | None
    max_rss_mib: float | None
    exec_error: str | None = None  # why it could not start (then exit_code is 127 or 126)
    leftovers: int = 0             # processes it left behind, killed at its end
    survivors: int = 0             # ... and those that could not be killed
    logs: Mapping[str, LogInfo] = field(default_factory=dict)


def run_process(argv: Sequence[str], env: Mapping[str, str], stdout: Path, stderr: Path,
                timeout: float | None = None, grace: float = 10.0, cwd: Path | None = None,
                cancel: threading.Event | None = None, *, warden: Warden | None = None,
                log_limit: int = DEFAULT_LOG_LIMIT, secrets: Sequence[str] = (),
                on_started: Callable[[Handle], None] | None = None) -> ProcessResult:
    """Run `argv` to completion; on timeout SIGTERM to its group, `grace` seconds, SIGKILL. The
    child's environment is `env` plus `AORTA_TRIAL_TOKEN`, by which its descendants are found.
    A KeyboardInterrupt, or `cancel` being set, kills everything it started and raises
    (KeyboardInterrupt, or `Cancelled`). Without a `warden`, one is started for this call."""
    if warden is None:
        with Warden.start() as own:
            return run_process(argv, env, stdout, stderr, timeout, grace, cwd, cancel,
                               warden=own, log_limit=log_limit, secrets=secrets,
                               on_started=on_started)
    token = token_source.token_hex(16)
    start = time.perf_counter()
    try:
        handle = warden.spawn(argv, {**env, TOKEN_VARIABLE: token}, stdout, stderr, token,
                              log_limit, secrets, cwd)
    except SpawnFailed as exc:
        code = 127 if exc.errno == errno.ENOENT else 126 if exc.errno in (
            errno.EACCES, errno.ENOEXEC, errno.EISDIR, errno.EPERM) else 1
        return ProcessResult(False, code, None, False, time.perf_counter() - start, None, None,
                             None, exec_error=str(exc))
    if on_started is not None:
        on_started(handle)
    timed_out = False
    try:
        if not _wait(handle.done, timeout, cancel):
            timed_out = True
            warden.signal(handle, signal.SIGTERM)
            if not handle.done.wait(grace):
                warden.kill(handle)
                handle.done.wait()
    except BaseException:
        warden.signal(handle, signal.SIGTERM)
        if not handle.done.wait(1.0):
            warden.kill(handle)
            handle.done.wait(10.0)
        raise
    return _result(handle, timed_out)


def _wait(done: threading.Event, seconds: float | None, cancel: threading.Event | None) -> bool:
    """Wait for the child like `done.wait`, but raise `Cancelled` as soon as `cancel` is set."""
    if cancel is None:
        return done.wait(seconds)
    deadline = None if seconds is None else time.monotonic() + seconds
    while True:
        left = _POLL_CANCEL_S if deadline is None else min(_POLL_CANCEL_S,
                                                           deadline - time.monotonic())
        if done.wait(max(0.0, left)):
            return True
        if cancel.is_set():
            raise Cancelled()
        if deadline is not None and time.monotonic() >= deadline:
            return False


def _result(handle: Handle, timed_out: bool) -> ProcessResult:
    msg = handle.outcome or {}
    if "lost" in msg:     # not the payload's doing: no record; the trial runs again
        raise WardenLost(f"{msg['lost']}: the trial's processes were killed, the run is marked "
                         f"interrupted and the same command resumes it")
    status = int(msg["status"])
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    logs = {name: LogInfo(int(v[0]), int(v[1]), v[2]) for name, v in msg["logs"].items()}
    return ProcessResult(
        launched=True, exit_code=None if sig is not None else os.WEXITSTATUS(status),
        signal=sig, timed_out=timed_out, wall_s=float(msg["wall_s"]),
        cpu_user_s=float(msg["utime"]), cpu_sys_s=float(msg["stime"]),
        max_rss_mib=float(msg["maxrss_kib"]) / 1024.0,   # Linux reports KiB
        leftovers=int(msg["killed"]), survivors=int(msg["survivors"]), logs=logs)
