"""The driver's side of the trial warden (run/warden_server.py): one warden serves a whole
sweep; a reader thread routes its events to the trial they concern. Start it from the thread
that will outlive the trials (the kernel ties the warden's parent-death signal to that thread).
If the warden dies, every waiting trial is told so (`WardenLost`) and its processes are killed
from here.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from aorta.base.errors import WardenLost
from aorta.base.source_tree import aorta_root
from aorta.host.proc_table import TOKEN_VARIABLE, kill_all, processes, trial_members

#: How long the warden's last check for leftover processes may take: each of its kills has a
#: 5 s deadline, and one look at /proc reads each process once (milliseconds for hundreds).
_BYE_TIMEOUT_S = 60.0


class SpawnFailed(Exception):
    """The payload could not be started (`errno` says why when the OS did)."""

    def __init__(self, message: str, errno: int | None) -> None:
        super().__init__(message)
        self.errno = errno


@dataclass
class Handle:
    """One payload the warden started."""

    id: str
    token: str
    started: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    pid: int = 0
    start_ticks: int = 0
    start_msg: dict[str, Any] | None = None
    outcome: dict[str, Any] | None = None     # the "done" event, or {"lost": reason}


class Warden:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.lock = threading.Lock()
        self.handles: dict[str, Handle] = {}
        self.ids = itertools.count()
        self.dead: str | None = None
        self.closed: dict[str, Any] | None = None    # the warden's last event
        self.reader = threading.Thread(target=self._read, name="warden-events", daemon=True)
        self.reader.start()

    @classmethod
    def start(cls) -> Warden:
        env = dict(os.environ)
        root = aorta_root()
        if root is not None:   # running from a source tree: let the warden import aorta too
            env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
        argv = [sys.executable, "-m", "aorta.run.warden_server", str(os.getpid())]
        return cls(subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env,
                                    start_new_session=True, close_fds=True))

    def __enter__(self) -> Warden:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def spawn(self, argv: Sequence[str], env: Mapping[str, str], stdout: Path, stderr: Path,
              token: str, limit: int, secrets: Sequence[str] = (),
              cwd: Path | None = None) -> Handle:
        """Start `argv`; returns once it runs. Raises `SpawnFailed` when it cannot start."""
        handle = Handle(str(next(self.ids)), token)
        with self.lock:
            if self.dead is not None:    # no trial can be contained any more
                raise WardenLost(f"{self.dead}; the run is marked interrupted and the same "
                                 f"command resumes it")
            self.handles[handle.id] = handle
        self._send({"op": "spawn", "id": handle.id, "argv": list(argv), "env": dict(env),
                    "cwd": str(cwd) if cwd else None, "stdout": str(stdout),
                    "stderr": str(stderr), "limit": limit, "secrets": list(secrets),
                    "token": token})
        handle.started.wait()
        msg = handle.start_msg or {}
        if msg.get("event") != "started":
            with self.lock:
                self.handles.pop(handle.id, None)
            raise SpawnFailed(str(msg.get("error") or self.dead or "the warden refused"),
                              msg.get("errno"))
        handle.pid, handle.start_ticks = int(msg["pid"]), int(msg["start_ticks"])
        return handle

    def signal(self, handle: Handle, sig: int) -> None:
        """`sig` to the payload's process group (a polite stop: SIGTERM)."""
        self._send({"op": "signal", "id": handle.id, "signal": int(sig)})

    def kill(self, handle: Handle) -> None:
        """SIGKILL to every process of the trial, wherever it went."""
        self._send({"op": "kill", "id": handle.id})

    def close(self) -> str | None:
        """Ask the warden to end, killing what any trial left, and wait for its last check to
        finish; a note naming the processes it could not vouch for, if any."""
        self._send({"op": "bye"})
        with suppress(OSError):
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        unchecked: list[int] | None = None    # its children, when it had to be stopped
        try:
            self.proc.wait(_BYE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            unchecked = [p.pid for p in processes() if p.ppid == self.proc.pid]
            self.proc.kill()
            self.proc.wait()
        self.reader.join(5.0)
        if self.closed is None:
            how = "it ended early" if unchecked is None else f"stopped after {_BYE_TIMEOUT_S:g} s"
            which = f"its children ({_pids(unchecked)}) and " if unchecked else ""
            return (f"the trial warden did not finish its last check for processes left by the "
                    f"trials ({how}): it cannot vouch for {which}any process that carries "
                    f"{TOKEN_VARIABLE} in its environment")
        left = [int(p) for p in self.closed.get("survivors", [])]
        return f"{len(left)} process(es) left by the trials could not be killed ({_pids(left)})" \
            if left else None

    def _send(self, msg: dict[str, Any]) -> None:
        line = (json.dumps(msg) + "\n").encode()
        with self.lock:
            if self.dead is not None or self.proc.stdin is None or self.proc.stdin.closed:
                return
            with suppress(OSError):   # the reader sees it die and tells every trial
                self.proc.stdin.write(line)
                self.proc.stdin.flush()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("event") == "closed":
                self.closed = msg
            with self.lock:
                handle = self.handles.get(str(msg.get("id")))
            if handle is None:
                continue
            if msg.get("event") in ("started", "failed"):
                handle.start_msg = msg
                handle.started.set()
            elif msg.get("event") == "done":
                with self.lock:
                    self.handles.pop(handle.id, None)
                handle.outcome = msg
                handle.done.set()
        self._lost()

    def _lost(self) -> None:
        """The warden is gone: kill what its trials left from here, and tell their waiters."""
        with self.lock:
            self.dead = "aorta's trial warden stopped unexpectedly"
            pending, self.handles = list(self.handles.values()), {}
        for handle in pending:
            if handle.pid:
                kill_all(lambda: trial_members(handle.pid, handle.start_ticks, handle.token), 5.0)
            handle.start_msg = handle.start_msg or {"event": "failed", "error": self.dead}
            handle.outcome = {"lost": self.dead}
            handle.started.set()
            handle.done.set()


def _pids(pids: list[int]) -> str:
    return "pid " + ", ".join(map(str, pids[:20])) + (" ..." if len(pids) > 20 else "")
