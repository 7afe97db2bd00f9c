"""The trial warden: starts the trials' payloads and makes sure nothing of them outlives its
trial or the driver (docs/reliability.md, "Containment"). `python -m aorta.run.warden_server
DRIVER_PID`; Linux only. JSON lines; requests on stdin, events on stdout:
  {"op": "spawn", "id", "argv", "env", "cwd", "stdout", "stderr", "limit", "secrets", "token"}
  {"op": "signal", "id", "signal"}  {"op": "kill", "id"}  {"op": "bye"}
  {"id", "event": "started", "pid", "start_ticks"}  {"id", "event": "failed", "errno", "error"}
  {"id", "event": "done", "status", "wall_s", "utime", "stime", "maxrss_kib", "killed",
   "survivors", "logs": {"stdout": [written, kept, problem]}}
  {"event": "closed", "survivors": [pid, ...]}   (last: what its last check could not kill)"""

from __future__ import annotations

import ctypes
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from contextlib import suppress
from typing import Any

from aorta.base.redaction import CREDENTIALS_IN_BYTES
from aorta.host.proc_table import (ProcInfo, kill_all, proc_info, processes, trial_members,
                                   trial_token)
from aorta.run.capped_log import CappedLog

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_READ = 1 << 16
_PIPE_GRACE_S = 1.0          # after the payload's group is gone, how long its pipes may stay open


def prctl(option: int, value: int) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


class _Trial:
    def __init__(self, tid: str, proc: subprocess.Popen[bytes], token: str, start: float) -> None:
        self.id, self.proc, self.pid, self.token, self.start = tid, proc, proc.pid, token, start
        info = proc_info(proc.pid)
        self.start_ticks = info.start_ticks if info else 0
        self.pipes: dict[int, tuple[str, Any]] = {}   # open read ends -> (stream, its file)
        self.logs: dict[str, CappedLog] = {}
        self.exit: tuple[int, Any, float] | None = None
        self.killed = self.survivors = 0
        self.cleaned_at: float | None = None


class Warden:
    def __init__(self, control: int, events: int) -> None:
        self.control, self.events = control, events
        self.me = os.getpid()
        self.sel = selectors.DefaultSelector()
        self.trials: dict[str, _Trial] = {}
        self.by_pid: dict[int, _Trial] = {}
        self.inbox = b""
        self.tokens: set[str] = set()     # every trial's, for the last look at the end
        self.last_chld = time.perf_counter()
        self.stop = False

    def serve(self) -> None:
        wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        signal.signal(signal.SIGCHLD, self._on_chld)
        for sig in (signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, self._on_term)
        # Ctrl-C is the driver's to handle. A handler, not SIG_IGN: an ignored signal stays
        # ignored in every payload started from here, a handler is reset by exec.
        signal.signal(signal.SIGINT, lambda signum, frame: None)
        self.sel.register(self.control, selectors.EVENT_READ, None)
        self.sel.register(wake_r, selectors.EVENT_READ, "wake")
        while not self.stop:
            waiting = any(t.cleaned_at is not None for t in self.trials.values())
            for key, _ in self.sel.select(timeout=0.05 if waiting else 1.0):
                if key.data is None:
                    self._read_control()
                elif key.data == "wake":
                    _drain(wake_r)
                else:
                    self._relay(key.fd, key.data)
            self._reap()
            for trial in list(self.trials.values()):
                self._advance(trial)
        self._shutdown()

    def _on_chld(self, signum: int, frame: Any) -> None:
        self.last_chld = time.perf_counter()

    def _on_term(self, signum: int, frame: Any) -> None:
        self.stop = True

    def _read_control(self) -> None:
        try:
            data = os.read(self.control, _READ)
        except BlockingIOError:
            return
        if not data:   # the driver is gone
            self.stop = True
            return
        self.inbox += data
        while b"\n" in self.inbox:
            line, self.inbox = self.inbox.split(b"\n", 1)
            self._handle(json.loads(line))

    def _handle(self, msg: dict[str, Any]) -> None:
        op, tid = msg.get("op"), msg.get("id", "")
        trial = self.trials.get(tid)
        if op == "spawn":
            self._spawn(msg)
        elif op == "signal" and trial is not None and trial.exit is None:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(trial.pid, int(msg["signal"]))
        elif op == "kill" and trial is not None:
            kill_all(lambda: self._members(trial), 2.0, self._reap)
        elif op == "bye":
            self.stop = True

    def _emit(self, doc: dict[str, Any]) -> None:
        try:
            os.write(self.events, (json.dumps(doc) + "\n").encode())
        except OSError:
            self.stop = True   # nobody listens any more

    def _spawn(self, msg: dict[str, Any]) -> None:
        tid, limit = msg["id"], int(msg["limit"])
        secrets = [s.encode() for s in msg.get("secrets", []) if s]
        try:
            files = {name: os.open(msg[name], os.O_WRONLY | os.O_CREAT | os.O_TRUNC |
                                   os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
                     for name in ("stdout", "stderr")}
        except OSError as exc:
            self._emit({"id": tid, "event": "failed", "errno": exc.errno,
                        "error": f"cannot open its log: {exc}"})
            return
        start = time.perf_counter()
        try:   # no preexec_fn: no Python runs between fork and exec (about 1 ms a start)
            proc = subprocess.Popen(msg["argv"], env=msg["env"], cwd=msg.get("cwd"),
                                    stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, start_new_session=True, close_fds=True)
        except (OSError, subprocess.SubprocessError) as exc:
            errno_ = getattr(exc, "errno", None)
            text = f"aorta: cannot execute {msg['argv'][0]!r}: {getattr(exc, 'strerror', None) or exc}"
            os.write(files["stderr"], (text + "\n").encode())
            for fd in files.values():
                os.close(fd)
            self._emit({"id": tid, "event": "failed", "errno": errno_, "error": text})
            return
        trial = _Trial(tid, proc, str(msg["token"]), start)
        self.tokens.add(trial.token)
        for name, pipe in (("stdout", proc.stdout), ("stderr", proc.stderr)):
            assert pipe is not None
            os.set_blocking(pipe.fileno(), False)
            trial.pipes[pipe.fileno()] = (name, pipe)
            trial.logs[name] = CappedLog(files[name], limit, secrets, CREDENTIALS_IN_BYTES)
            self.sel.register(pipe.fileno(), selectors.EVENT_READ, tid)
        self.trials[tid] = self.by_pid[proc.pid] = trial
        self._emit({"id": tid, "event": "started", "pid": proc.pid,
                    "start_ticks": trial.start_ticks})

    def _relay(self, fd: int, tid: str) -> None:
        trial = self.trials[tid]
        try:
            data = os.read(fd, _READ)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            trial.logs[trial.pipes[fd][0]].feed(data)
        else:
            self._close_pipe(trial, fd)

    def _close_pipe(self, trial: _Trial, fd: int) -> None:
        self.sel.unregister(fd)
        _, pipe = trial.pipes.pop(fd)
        pipe.close()   # through its file object: the Popen must not close the number again

    def _reap(self) -> None:
        """wait4 on every child that ended: the payload's own CPU time and peak RSS."""
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            trial = self.by_pid.pop(pid, None)
            if trial is not None:
                end = self.last_chld if self.last_chld > trial.start else time.perf_counter()
                trial.exit = (status, usage, end)
                trial.proc.returncode = os.waitstatus_to_exitcode(status)

    def _advance(self, trial: _Trial) -> None:
        if trial.exit is None:
            return
        if trial.cleaned_at is None:
            trial.killed, left = kill_all(lambda: self._members(trial), 5.0, self._reap)
            trial.survivors = len(left)
            trial.cleaned_at = time.monotonic()
        if trial.pipes and time.monotonic() - trial.cleaned_at < _PIPE_GRACE_S:
            return
        for fd in list(trial.pipes):
            self._close_pipe(trial, fd)
        self._finish(trial)

    def _finish(self, trial: _Trial) -> None:
        assert trial.exit is not None
        status, usage, end = trial.exit
        logs = {name: list(log.close()) for name, log in trial.logs.items()}
        del self.trials[trial.id]
        self._emit({"id": trial.id, "event": "done", "status": status,
                    "wall_s": end - trial.start, "utime": usage.ru_utime,
                    "stime": usage.ru_stime, "maxrss_kib": usage.ru_maxrss,
                    "killed": trial.killed, "survivors": trial.survivors, "logs": logs})

    def _members(self, trial: _Trial) -> list[ProcInfo]:
        """The trial's processes, plus orphans that came back here and belong to no other
        live trial (they carry its token, or no token while it is the only trial)."""
        table = list(processes(trial.pid))
        members = trial_members(trial.pid, trial.start_ticks, trial.token, table)
        found = {p.pid for p in members}
        others = {t.token for t in self.trials.values() if t is not trial}
        for p in table:
            if p.ppid != self.me or p.pid in found or p.pid in self.by_pid or p.state == "Z":
                continue
            if trial_token(p.pid) not in others:
                members.append(p)
        return members

    def _shutdown(self) -> None:
        """The driver is gone (or said bye): nothing of any trial may stay. The last event
        names what could not be killed."""
        left: set[int] = set()
        for trial in list(self.trials.values()):
            left.update(kill_all(lambda: self._members(trial), 5.0, self._reap)[1])
        left.update(kill_all(self._orphans, 5.0, self._reap)[1])
        for trial in list(self.trials.values()):
            for log in trial.logs.values():
                log.close()
        self._emit({"event": "closed", "survivors": sorted(left)})

    def _orphans(self) -> list[ProcInfo]:
        """Every process that came back here or carries any trial's token: one full look, last;
        each environment is read once, whatever the number of trials."""
        return [p for p in processes() if p.state != "Z" and p.pid != self.me and (
            p.ppid == self.me or trial_token(p.pid) in self.tokens)]


def _drain(fd: int) -> None:
    with suppress(BlockingIOError):
        while os.read(fd, 4096):
            pass


def main(argv: list[str]) -> int:
    driver = int(argv[0]) if argv else os.getppid()
    prctl(_PR_SET_CHILD_SUBREAPER, 1)
    prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != driver:
        return 1   # the driver died while this process started
    os.set_blocking(0, False)
    Warden(0, 1).serve()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
