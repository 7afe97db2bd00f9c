"""A lock file that keeps two live runs out of one run directory.

The lock holds `{pid, host, started_at}`. A lock left by a dead process on this host is taken
over; a live holder, or any holder on another host (whose liveness we cannot check), refuses.
"""

from __future__ import annotations

import json
import os
import socket
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType

from aorta.errors import RunDirError

__all__ = ["RunLock", "LOCK_NAME"]

LOCK_NAME = ".aorta.lock"


class RunLock:
    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK_NAME
        self.held = False

    def acquire(self) -> None:
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        for _ in range(2):
            try:
                fd = os.open(self.path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
            except FileExistsError:
                holder = self._holder()
                if holder is not None and self._alive(holder):
                    raise RunDirError(
                        f"{self.path.parent}: another aorta run holds it (pid {holder.get('pid')} "
                        f"on {holder.get('host')}, since {holder.get('started_at')}); wait for it "
                        f"or use another --output") from None
                self.path.unlink(missing_ok=True)  # stale: its process is gone
                continue
            with os.fdopen(fd, "w") as fh:
                json.dump(me, fh)
            self.held = True
            return
        raise RunDirError(f"{self.path}: could not take the run lock; remove it if no run is live")

    def _holder(self) -> dict[str, object] | None:
        try:
            doc = json.loads(self.path.read_text())
            return doc if isinstance(doc, dict) else None
        except (OSError, ValueError):
            return None  # unreadable or half-written: treat as stale

    @staticmethod
    def _alive(holder: dict[str, object]) -> bool:
        if holder.get("host") != socket.gethostname():
            return True
        pid = holder.get("pid")
        if not isinstance(pid, int) or pid <= 0:
            return False
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def release(self) -> None:
        if self.held:
            self.path.unlink(missing_ok=True)
            self.held = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
