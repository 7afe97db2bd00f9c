"""What an earlier driver left running: a trial it started and never finished (the driver was
killed with its warden, or the OOM killer took both). Before a resumed run starts that trial
again, the processes its `.running.json` names are killed, so two copies never share a GPU."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable
from typing import Any

from aorta.host.proc_table import boot_id, kill_all, proc_info, same_live_process, trial_members
from aorta.store.run_dir import RunStore


def kill_stale_trials(store: RunStore, cells: Iterable[str]) -> int:
    """Kill what is left of every trial an earlier driver on this host marked running; return
    the count. Other hosts' or boots' marks are skipped (their worker or a reboot cleaned up)."""
    killed = 0
    here, boot = socket.gethostname(), boot_id()
    for cell, name, mark in store.running_marks(cells):
        if mark.get("host") != here or mark.get("boot_id") != boot or _driver_alive(mark):
            continue   # another node's, or a live driver or Slurm worker still runs it
        if _valid(mark):
            pid, ticks, token = int(mark["pid"]), int(mark["start_ticks"]), str(mark["token"])
            leader = proc_info(pid)
            # The session and group are this trial's only while their leader is the payload
            # itself; once it is gone, its pid may name someone else's: trust the token alone.
            root = pid if leader is not None and leader.start_ticks == ticks else -1
            killed += kill_all(lambda: trial_members(root, ticks, token), 5.0)[0]
        store.clear_running(cell, name)
    return killed


def _driver_alive(mark: dict[str, Any]) -> bool:
    """Whether the driver that marked a trial running (on this host and boot) still runs."""
    driver, ticks = mark.get("driver"), mark.get("driver_start_ticks")
    return isinstance(ticks, int) and driver != os.getpid() \
        and same_live_process(driver, ticks, hidden=False)


def _valid(mark: dict[str, Any]) -> bool:
    return (isinstance(mark.get("pid"), int) and mark["pid"] > 1
            and isinstance(mark.get("start_ticks"), int)
            and isinstance(mark.get("token"), str) and len(mark["token"]) >= 16)
