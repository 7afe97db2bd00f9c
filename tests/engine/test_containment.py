"""Nothing a payload starts outlives its trial or the driver (issue 11: containment).

Each payload writes the pids of the processes it leaves behind; after the trial (or after the
driver is killed) none of them may still run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from aorta.run.process import run_process

PY = sys.executable
SRC = str(Path(__file__).resolve().parents[2] / "src")

# A payload that leaves three kinds of escapees: a double-forked daemon in a new session, a
# child in its own process group, and a daemon that also clears its environment.
ESCAPER = textwrap.dedent("""
    import os, sys, time
    pids = sys.argv[1]
    open(pids, "w").close()

    def daemon(clear_env):
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                env = {} if clear_env else dict(os.environ)
                os.execve(sys.executable, [sys.executable, "-c",
                          "import os, time; open(%r, 'a').write(str(os.getpid()) + ' '); time.sleep(120)" % pids], env)
            os._exit(0)

    daemon(False)
    daemon(True)
    if os.fork() == 0:          # setpgid: its own process group, same session
        os.setpgid(0, 0)
        open(pids, "a").write(str(os.getpid()) + " ")
        time.sleep(120)
        os._exit(0)
    deadline = time.time() + 10
    while len(open(pids).read().split()) < 3 and time.time() < deadline:
        time.sleep(0.02)
    time.sleep(float(sys.argv[2]))
""")


def alive(pid: int) -> bool:
    """A zombie (killed, not yet reaped) counts as dead."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def survivors(pidfile: Path, wait_s: float = 0.0) -> list[int]:
    pids = [int(p) for p in pidfile.read_text().split()] if pidfile.exists() else []
    deadline = time.monotonic() + wait_s
    while True:
        left = [p for p in pids if alive(p)]
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.05)


@pytest.fixture
def escaper(tmp_path: Path) -> Path:
    path = tmp_path / "escaper.py"
    path.write_text(ESCAPER)
    return path


def test_escapees_of_a_normal_exit_are_killed(tmp_path: Path, escaper: Path) -> None:
    pids = tmp_path / "pids"
    res = run_process([PY, str(escaper), str(pids), "0"], dict(os.environ),
                      tmp_path / "o", tmp_path / "e")
    assert res.exit_code == 0, (tmp_path / "e").read_text()
    assert len(pids.read_text().split()) == 3
    assert survivors(pids) == []
    assert res.leftovers >= 3 and res.survivors == 0


def test_escapees_of_a_timeout_are_killed(tmp_path: Path, escaper: Path) -> None:
    pids = tmp_path / "pids"
    res = run_process([PY, str(escaper), str(pids), "60"], dict(os.environ), tmp_path / "o",
                      tmp_path / "e", timeout=1.5, grace=0.5)
    assert res.timed_out
    assert len(pids.read_text().split()) == 3
    assert survivors(pids) == []


DRIVER = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, {src!r})
    from aorta.run.process import run_process
    run_process([sys.executable, {escaper!r}, {pids!r}, "120"], dict(os.environ),
                {out!r}, {err!r})
""")


def test_sigkill_of_the_driver_leaves_no_survivor(tmp_path: Path, escaper: Path) -> None:
    pids = tmp_path / "pids"
    script = tmp_path / "driver.py"
    script.write_text(DRIVER.format(src=SRC, escaper=str(escaper), pids=str(pids),
                                    out=str(tmp_path / "o"), err=str(tmp_path / "e")))
    driver = subprocess.Popen([PY, str(script)])
    try:
        deadline = time.monotonic() + 20
        while (not pids.exists() or len(pids.read_text().split()) < 3) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(pids.read_text().split()) == 3
        os.kill(driver.pid, signal.SIGKILL)
    finally:
        driver.wait()
    assert survivors(pids, wait_s=10.0) == []


def test_a_last_check_that_cannot_finish_names_what_it_could_not_vouch_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from aorta.run import warden as warden_module

    assert warden_module.Warden.start().close() is None     # finished, nothing left
    monkeypatch.setattr(warden_module, "_BYE_TIMEOUT_S", 1.0)
    warden = warden_module.Warden.start()
    handle = warden.spawn([PY, "-c", "import time; time.sleep(120)"], dict(os.environ),
                          tmp_path / "out", tmp_path / "err", "t" * 32, 1 << 20)
    os.kill(warden.proc.pid, signal.SIGSTOP)    # stuck, as on a read of a hung process's /proc
    try:
        note = warden.close()
    finally:
        os.kill(handle.pid, signal.SIGKILL)
    assert note is not None and "did not finish its last check" in note, note
    assert f"stopped after 1 s): it cannot vouch for its children (pid {handle.pid})" in note
    assert "AORTA_TRIAL_TOKEN" in note
