"""A lock file that keeps two live runs out of one run directory, whole from the moment it
exists (a temporary file linked into place, which fails if a lock is there). A dead process's
lock on this host is taken over; a live holder, or any holder on another host, refuses. How a
holder is judged dead: docs/reliability.md, "Signals".
"""

from __future__ import annotations

import json
import os
from contextlib import suppress
from pathlib import Path
from types import TracebackType

from aorta.base.errors import RunDirError
from aorta.host.proc_table import boot_id, proc_info, same_live_process
from aorta.store.files import open_dir

LOCK_NAME = ".aorta.lock"


class RunLock:
    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.path = run_dir / LOCK_NAME
        self.held = False

    def acquire(self) -> None:
        import secrets  # here, not at the top: reading a run (sweep status) takes no lock
        import socket
        from datetime import datetime, timezone

        info = proc_info(os.getpid())
        me = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                         "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                         "start_ticks": info.start_ticks if info else None, "boot_id": boot_id()})
        with open_dir(self.run_dir, ()) as dfd:
            tmp = f".aorta.lock.{secrets.token_hex(6)}.tmp"
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644,
                             dir_fd=dfd)
            except OSError as exc:
                exc.filename = LOCK_NAME   # the file meant, not its temporary name
                raise
            try:
                with os.fdopen(fd, "w") as fh:
                    fh.write(me)
                for _ in range(2):
                    try:
                        os.link(tmp, LOCK_NAME, src_dir_fd=dfd, dst_dir_fd=dfd,
                                follow_symlinks=False)
                    except FileExistsError:
                        self._refuse_live_holder()
                        os.unlink(LOCK_NAME, dir_fd=dfd)   # stale: its process is gone
                        continue
                    self.held = True
                    return
            finally:
                os.unlink(tmp, dir_fd=dfd)
        raise RunDirError(f"{self.path}: could not take the run lock; remove it if no run is live")

    def _refuse_live_holder(self) -> None:
        holder = self._holder()
        if holder is not None and self._alive(holder):
            raise RunDirError(
                f"{self.run_dir}: another aorta run holds it (pid {holder.get('pid')} on "
                f"{holder.get('host')}, since {holder.get('started_at')}); wait for it or use "
                f"another --output")

    def _holder(self) -> dict[str, object] | None:
        try:
            doc = json.loads(self.path.read_text())
            return doc if isinstance(doc, dict) else None
        except (OSError, ValueError):
            return None  # unreadable: a lock from an older aorta or a broken disk; stale

    @staticmethod
    def _alive(holder: dict[str, object]) -> bool:
        import socket

        if holder.get("host") != socket.gethostname():
            return True
        # A holder hidden from this user (hidepid) exists: alive.
        return holder.get("boot_id") in (None, boot_id()) and same_live_process(
            holder.get("pid"), holder.get("start_ticks"), hidden=True)

    def release(self) -> None:
        if self.held:
            with suppress(OSError, RunDirError), open_dir(self.run_dir, ()) as dfd:
                os.unlink(LOCK_NAME, dir_fd=dfd)
            self.held = False

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()


def held_by_live_run(run_dir: str | os.PathLike[str]) -> bool:
    """Whether a live process (or any on another host) holds `run_dir`'s lock. A run.json
    that says `running` without one was stopped by SIGKILL, a crash or a reboot."""
    holder = RunLock(Path(run_dir))._holder()
    return holder is not None and RunLock._alive(holder)
