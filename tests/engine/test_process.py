"""Running one process: exit codes, signals, timeouts that leave no survivor, exec failures."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

from aorta.run.process import run_process

PY = sys.executable


def run(tmp_path: Path, argv, **kw):
    return run_process(argv, dict(os.environ), tmp_path / "out.log", tmp_path / "err.log", **kw)


def test_exit_code_and_logs(tmp_path: Path):
    res = run(tmp_path, [PY, "-c", "import sys; print('hi'); print('oops', file=sys.stderr); sys.exit(3)"])
    assert (res.launched, res.exit_code, res.signal, res.timed_out) == (True, 3, None, False)
    assert (tmp_path / "out.log").read_text() == "hi\n"
    assert (tmp_path / "err.log").read_text() == "oops\n"


def test_rusage_is_the_childs_own(tmp_path: Path):
    # Burn ~0.3 s of CPU and touch ~200 MiB: both must show up in the child's accounting.
    code = "b = bytearray(200 * 1024 * 1024)\nimport time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
    res = run(tmp_path, [PY, "-c", code])
    assert res.exit_code == 0
    assert res.cpu_user_s is not None and res.cpu_sys_s is not None
    assert res.cpu_user_s + res.cpu_sys_s >= 0.25
    assert res.max_rss_mib is not None and res.max_rss_mib >= 200
    assert res.wall_s >= 0.3


def test_signal_death_is_reported(tmp_path: Path):
    res = run(tmp_path, [PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    assert res.exit_code is None and res.signal == signal.SIGSEGV


def test_timeout_kills_the_whole_group_including_grandchildren(tmp_path: Path):
    pidfile = tmp_path / "pids"
    code = f"""
import os, subprocess, sys, time, signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)   # the payload ignores SIGTERM: needs SIGKILL
kids = [subprocess.Popen([sys.executable, '-c', 'import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)']) for _ in range(2)]
open({str(pidfile)!r}, 'w').write(' '.join(str(k.pid) for k in kids))
time.sleep(60)
"""
    start = time.monotonic()
    res = run(tmp_path, [PY, "-c", code], timeout=1.0, grace=0.5)
    assert res.timed_out and res.signal == signal.SIGKILL
    assert time.monotonic() - start < 10
    for pid in map(int, pidfile.read_text().split()):
        assert not _alive(pid), f"grandchild {pid} survived the trial"


def test_grandchildren_left_behind_by_a_normal_exit_are_killed(tmp_path: Path):
    pidfile = tmp_path / "pid"
    code = f"""
import subprocess, sys
p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])
open({str(pidfile)!r}, 'w').write(str(p.pid))
"""
    res = run(tmp_path, [PY, "-c", code])
    assert res.exit_code == 0
    assert not _alive(int(pidfile.read_text()))


def test_missing_command_is_127(tmp_path: Path):
    res = run(tmp_path, ["definitely-not-a-command-xyz"])
    assert (res.launched, res.exit_code) == (False, 127)
    assert "cannot execute" in (tmp_path / "err.log").read_text()


def test_non_executable_is_126(tmp_path: Path):
    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    res = run(tmp_path, [str(script)])
    assert (res.launched, res.exit_code) == (False, 126)


def test_env_is_exactly_what_was_given(tmp_path: Path):
    res = run_process([PY, "-c", "import os; print(sorted(k for k in os.environ if k.startswith('AORTA_X')))"],
                      {"AORTA_X1": "x", "PATH": os.environ["PATH"]}, tmp_path / "o", tmp_path / "e")
    assert res.exit_code == 0
    assert (tmp_path / "o").read_text().strip() == "['AORTA_X1']"


def _alive(pid: int) -> bool:
    # A zombie (killed, not yet reaped by init) counts as dead.
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
