"""`in_trial`: whether a process NVML lists on a GPU is one of the trial's, read from /proc
(the payload itself, its descendants, anything carrying its token) or unknown."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from aorta.host.proc_table import TOKEN_VARIABLE, in_trial, proc_info, trial_token

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")

_SLEEP = "import time; time.sleep(30)"


def _start(code: str, **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], **kwargs)  # type: ignore[call-overload]


def test_the_payload_its_descendants_and_token_bearers_are_the_trials() -> None:
    token = "f00d" * 8
    root = _start("import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
                  "'import time; time.sleep(30)'], start_new_session=True); time.sleep(30)",
                  start_new_session=True)
    stray = _start(_SLEEP, start_new_session=True,
                   env={**os.environ, TOKEN_VARIABLE: token})   # moved away, keeps the token
    outsider = _start(_SLEEP)
    try:
        root_start = proc_info(root.pid).start_ticks
        grandchild = None
        for _ in range(500):     # the payload's child, in a session of its own
            kids = [p for p in os.listdir("/proc") if p.isdigit()
                    and (info := proc_info(int(p))) and info.ppid == root.pid]
            if kids:
                grandchild = int(kids[0])
                break
            time.sleep(0.01)
        assert grandchild is not None
        assert in_trial(root.pid, root.pid, root_start, token) is True
        assert in_trial(grandchild, root.pid, root_start, token) is True     # by parentage
        assert in_trial(stray.pid, root.pid, root_start, token) is True      # by its token
        assert in_trial(outsider.pid, root.pid, root_start, token) is False
        assert in_trial(os.getpid(), root.pid, root_start, token) is False   # started before
        assert in_trial(2 ** 31 - 7, root.pid, root_start, token) is None    # /proc lacks it
    finally:
        for proc in (root, stray, outsider):
            proc.kill()
            proc.wait()
        if grandchild is not None:
            try:
                os.kill(grandchild, 9)
            except ProcessLookupError:
                pass


def test_the_token_is_read_from_the_environment_once_and_exactly() -> None:
    env = {"XAORTA_TRIAL_TOKEN": "look-alike", "AORTA_TRIAL_TOKEN": "t" * 32,
           "B": "AORTA_TRIAL_TOKEN=no"}
    with subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], env=env) as proc:
        try:
            deadline = time.monotonic() + 10
            while trial_token(proc.pid) is None and time.monotonic() < deadline:
                time.sleep(0.01)     # until it has exec'd
            assert trial_token(proc.pid) == "t" * 32
        finally:
            proc.kill()
    assert trial_token(proc.pid) is None
