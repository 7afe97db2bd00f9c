"""Finding a trial's processes in Linux's /proc, wherever they went: by session or process
group (a `setpgid` child keeps the session), by the `AORTA_TRIAL_TOKEN=<random>` in every
trial's environment (kept after `setsid` or a double fork, unless the environment is cleared),
and by parentage. `start_ticks` (start time in clock ticks since boot, /proc/<pid>/stat field
22) keeps a process that reused a pid from being taken for one of ours. Containment as users
see it: docs/reliability.md, "Containment".
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass

TOKEN_VARIABLE = "AORTA_TRIAL_TOKEN"
_TOKEN_PREFIX = f"{TOKEN_VARIABLE}=".encode()
_PROC = "/proc"


@dataclass(frozen=True)
class ProcInfo:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str          # R, S, D, Z, T, ...
    start_ticks: int


def _parse_stat(pid: int, text: str) -> ProcInfo | None:
    # "1234 (python3 x) S 1 1234 1234 0 -1 4194560 ... 22nd field: starttime ..."
    # The command name may hold spaces and parentheses: split after the last ')'.
    try:
        rest = text[text.rindex(")") + 2:].split()
        return ProcInfo(pid, int(rest[1]), int(rest[2]), int(rest[3]), rest[0], int(rest[19]))
    except (ValueError, IndexError):
        return None


def _read(path: str, limit: int = -1) -> bytes | None:
    """`/proc/<path>` (unbuffered: one read of at most `limit` bytes), or None."""
    try:
        with open(f"{_PROC}/{path}", "rb", buffering=0) as fh:
            return fh.read(limit)
    except OSError:
        return None


def proc_info(pid: int) -> ProcInfo | None:
    text = _read(f"{pid}/stat", 2048)
    return None if text is None else _parse_stat(pid, text.decode("utf-8", "replace"))


def same_live_process(pid: object, start_ticks: object, hidden: bool) -> bool:
    """Whether `pid` (of this host and boot) still names the live process that started at
    `start_ticks` (None: not recorded, any); not a zombie (killed, not yet reaped), nor another
    process that got its pid. `hidden`: the answer when it exists but /proc hides it (hidepid)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        pass   # it exists, owned by someone else
    info = proc_info(pid)
    if info is None:
        return hidden
    return info.state != "Z" and start_ticks in (None, info.start_ticks)


def processes(since_pid: int | None = None) -> Iterator[ProcInfo]:
    """Every process visible now (those that vanish while being read are skipped). With
    `since_pid`, only that one and those whose pid was handed out after it (Linux gives pids
    in order, wrapping at pid_max): a /proc/<pid>/stat read costs tens of microseconds, so this
    keeps a trial's end cheap. If more than pid_max processes started during the trial, a
    descendant could be missed; the warden's last sweep reads them all."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return
    last = _last_pid() if since_pid is not None else None
    for name in names:
        if not name.isdigit():
            continue
        pid = int(name)
        if since_pid is not None and last is not None and not (
                since_pid <= pid <= last if last >= since_pid else pid >= since_pid or pid <= last):
            continue
        info = proc_info(pid)
        if info is not None:
            yield info


def _last_pid() -> int | None:
    text = _read("sys/kernel/ns_last_pid")   # "4242\n"
    return int(text) if text is not None and text.strip().isdigit() else None


def trial_token(pid: int) -> str | None:
    """The `AORTA_TRIAL_TOKEN` in `pid`'s environment (None: none, or it cannot be read). One
    read a process, however many trials' tokens it is compared with."""
    for entry in (_read(f"{pid}/environ") or b"").split(b"\0"):
        if entry.startswith(_TOKEN_PREFIX):
            return entry[len(_TOKEN_PREFIX):].decode("ascii", "replace")
    return None


def boot_id() -> str | None:
    text = _read("sys/kernel/random/boot_id")
    return None if text is None else text.decode("utf-8", "replace").strip()


def trial_members(root: int, root_start: int, token: str,
                  table: Iterable[ProcInfo] | None = None) -> list[ProcInfo]:
    """The live processes of the trial whose payload was `root` (started at `root_start`):
    its session and group, anything carrying its token, and their descendants."""
    me = os.getpid()
    found: dict[int, ProcInfo] = {}
    others: list[ProcInfo] = []
    for p in (processes(root) if table is None else table):
        if p.pid == me or p.state == "Z" or p.start_ticks < root_start:
            continue
        if p.sid == root or p.pgid == root or trial_token(p.pid) == token:
            found[p.pid] = p
        else:
            others.append(p)
    grew = True
    while grew:   # children of found processes that cleared their environment and moved away
        grew = False
        for p in others:
            if p.pid not in found and p.ppid in found:
                found[p.pid] = p
                grew = True
    return list(found.values())


def in_trial(pid: int, root: int, root_start: int, token: str) -> bool | None:
    """Whether process `pid` is one of the trial's (by the same marks as `trial_members`, or
    by descending from one), or None when /proc does not show it (it ended, or the pid is
    another namespace's: NVML lists a container's GPU processes by their host pids)."""
    info = proc_info(pid)
    if info is None:
        return None
    if info.start_ticks < root_start:
        return False
    if trial_token(pid) == token:
        return True
    for _ in range(64):                 # up the parent chain, which ends at pid 1
        if info.pid == root or info.sid == root or info.pgid == root:
            return True
        parent = proc_info(info.ppid) if info.ppid > 1 else None
        if parent is None or parent.start_ticks < root_start:
            return False
        info = parent
    return False


def kill_all(find: Callable[[], list[ProcInfo]], deadline_s: float = 5.0,
             reap: Callable[[], None] | None = None) -> tuple[int, list[int]]:
    """SIGKILL what `find()` returns until it returns nothing or the deadline passes; (how many
    were killed, the pids still alive). `reap` collects this process's zombies (the warden is
    a child subreaper)."""
    killed: set[int] = set()
    end = time.monotonic() + deadline_s
    while True:
        members = find()
        if reap is not None:
            reap()
        if not members:
            return len(killed), []
        for p in members:
            with suppress(ProcessLookupError, PermissionError):
                os.kill(p.pid, signal.SIGKILL)
                killed.add(p.pid)
        if time.monotonic() > end:
            return len(killed), [p.pid for p in find()]
        time.sleep(0.01)
