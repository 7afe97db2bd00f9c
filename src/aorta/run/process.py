"""Running one command the way a trial must: no shell, its own process group, logs to files,
a timeout that takes the whole group down, and the kernel's own accounting of what it cost.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcessResult", "run_process", "Cancelled"]

_POLL_GROUP_S = 0.05
_POLL_CANCEL_S = 0.1


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


def run_process(argv: Sequence[str], env: Mapping[str, str], stdout: Path, stderr: Path,
                timeout: float | None = None, grace: float = 10.0,
                cwd: Path | None = None, cancel: threading.Event | None = None) -> ProcessResult:
    """Run `argv` to completion. On timeout: SIGTERM to its group, `grace` seconds, SIGKILL.

    Whatever the payload leaves behind in its process group is killed once it exits, so no
    grandchild outlives the trial. A KeyboardInterrupt, or `cancel` being set, kills the group,
    reaps it and raises (KeyboardInterrupt, or `Cancelled`).
    """
    with open(stdout, "wb") as out, open(stderr, "wb") as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(list(argv), env=dict(env), stdout=out, stderr=err,
                                    stdin=subprocess.DEVNULL, cwd=cwd, start_new_session=True,
                                    close_fds=True)
        except OSError as exc:
            code = 127 if isinstance(exc, FileNotFoundError) else 126 \
                if isinstance(exc, PermissionError) else 1
            message = f"aorta: cannot execute {argv[0]!r}: {exc.strerror or exc}"
            err.write((message + "\n").encode())
            return ProcessResult(False, code, None, False, time.perf_counter() - start,
                                 None, None, None, exec_error=message)
        return _supervise(proc, start, timeout, grace, cancel)


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


def _supervise(proc: subprocess.Popen[bytes], start: float, timeout: float | None,
               grace: float, cancel: threading.Event | None) -> ProcessResult:
    reaped: dict[str, object] = {}
    done = threading.Event()

    def reap() -> None:
        # wait4 gives the child's own rusage (CPU time, max RSS), unlike getrusage deltas,
        # which would mix trials that run at the same time.
        _, status, usage = os.wait4(proc.pid, 0)
        reaped.update(status=status, usage=usage, end=time.perf_counter())
        done.set()

    waiter = threading.Thread(target=reap, name=f"reap-{proc.pid}", daemon=True)
    waiter.start()
    timed_out = False
    try:
        if not _wait(done, timeout, cancel):
            timed_out = True
            _signal_group(proc.pid, signal.SIGTERM)
            if not done.wait(grace):
                _signal_group(proc.pid, signal.SIGKILL)
                done.wait()
    except BaseException:
        _signal_group(proc.pid, signal.SIGTERM)
        if not done.wait(1.0):
            _signal_group(proc.pid, signal.SIGKILL)
            done.wait()
        _kill_leftovers(proc.pid)
        proc.returncode = -1
        raise
    _kill_leftovers(proc.pid)
    status = int(reaped["status"])  # type: ignore[call-overload]
    usage = reaped["usage"]
    proc.returncode = os.waitstatus_to_exitcode(status)
    sig = os.WTERMSIG(status) if os.WIFSIGNALED(status) else None
    return ProcessResult(
        launched=True,
        exit_code=None if sig is not None else os.WEXITSTATUS(status),
        signal=sig,
        timed_out=timed_out,
        wall_s=float(reaped["end"]) - start,  # type: ignore[arg-type]
        cpu_user_s=usage.ru_utime,  # type: ignore[attr-defined]
        cpu_sys_s=usage.ru_stime,  # type: ignore[attr-defined]
        max_rss_mib=usage.ru_maxrss / 1024.0,  # type: ignore[attr-defined]  # Linux: KiB
    )


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_leftovers(pgid: int) -> None:
    """SIGKILL whatever still runs in the trial's group (daemonised grandchildren)."""
    _signal_group(pgid, signal.SIGKILL)
    deadline = time.monotonic() + 2.0
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except (ProcessLookupError, PermissionError):
            return
        time.sleep(_POLL_GROUP_S)
