"""Issue 11: SIGKILL of the driver at random moments, then resume: no process of any trial
survives, no finished record is lost or changed, and the run completes. And when the driver
and its warden are killed together, the resumed run kills what they left before rerunning."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from aorta_testing import REPO

# Each trial leaves a setsid daemon and a child in its own group (both would outlive a
# careless harness), writes their pids, then works for a moment.
PAYLOAD = textwrap.dedent("""
    import os, sys, time
    pids = os.path.join(sys.argv[1], f"{os.getpid()}.pids")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            open(pids, "a").write(f"{os.getpid()} ")
            time.sleep(300)
        os._exit(0)
    if os.fork() == 0:
        os.setpgid(0, 0)
        open(pids, "a").write(f"{os.getpid()} ")
        time.sleep(300)
        os._exit(0)
    time.sleep(float(sys.argv[2]))
""")
RECIPE = "schema_version: 1\nticket: k\ntrials: 4\naxes: {v: {a: {}, b: {}, c: {}}}\n"
KILLS = 20


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _survivors(pid_dir: Path, wait_s: float) -> list[int]:
    deadline = time.monotonic() + wait_s
    while True:
        pids = [int(p) for f in pid_dir.glob("*.pids") for p in f.read_text().split()]
        left = [p for p in pids if _alive(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _records(run: Path) -> dict[str, str]:
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in run.glob("cells/*/*/result.json")}


def _driver(tmp_path: Path, seconds: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    return subprocess.Popen(
        [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(tmp_path / "r.yaml"),
         "--output", str(tmp_path / "out"), "--", sys.executable, str(tmp_path / "p.py"),
         str(tmp_path / "pids"), seconds], env=env, stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL, cwd=tmp_path)


def test_random_driver_kills_then_resume(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(PAYLOAD)
    (tmp_path / "r.yaml").write_text(RECIPE)
    (tmp_path / "pids").mkdir()
    rng = random.Random(11)
    run = tmp_path / "out" / "k"
    kept: dict[str, str] = {}
    for _ in range(KILLS):
        driver = _driver(tmp_path, "0.3")
        time.sleep(rng.uniform(0.05, 1.5))
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        assert _survivors(tmp_path / "pids", wait_s=10.0) == []
        now = _records(run)
        assert {k: now[k] for k in kept} == kept      # nothing finished was lost or changed
        kept = now
    done = _driver(tmp_path, "0.3")
    assert done.wait(timeout=120) == 0
    assert len(_records(run)) == 12
    assert {k: v for k, v in _records(run).items() if k in kept} == kept
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    assert not list(run.glob("cells/*/*/.running.json"))
    assert not (run / ".aorta.lock").exists()
    assert _survivors(tmp_path / "pids", wait_s=5.0) == []


def _warden_of(driver: int) -> int | None:
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[-1].split()[1]) == driver and b"warden_server" in cmd:
            return int(entry)
    return None


def test_a_resumed_run_kills_what_a_dead_driver_and_warden_left(tmp_path: Path) -> None:
    (tmp_path / "p.py").write_text(PAYLOAD)
    (tmp_path / "r.yaml").write_text("schema_version: 1\nticket: k\ntrials: 1\n")
    (tmp_path / "pids").mkdir()
    driver = _driver(tmp_path, "300")
    deadline = time.monotonic() + 120     # a loaded machine starts the trial slowly
    while not any(len(f.read_text().split()) == 2 for f in (tmp_path / "pids").glob("*.pids")):
        assert time.monotonic() < deadline, "the trial never wrote its two pids"
        time.sleep(0.05)
    warden = _warden_of(driver.pid)
    assert warden is not None
    # The OOM killer takes both at once. Stopped first, the driver cannot see its warden die
    # and clean up itself (it does that when only the warden is lost).
    os.kill(driver.pid, signal.SIGSTOP)
    os.kill(warden, signal.SIGKILL)
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    time.sleep(0.5)
    # With the warden gone too, nothing killed the payload's processes yet.
    left = _survivors(tmp_path / "pids", wait_s=0.0)
    assert left, "nothing was left to clean up: the test proves nothing"
    again = subprocess.run(
        [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(tmp_path / "r.yaml"),
         "--output", str(tmp_path / "out"), "--timeout", "1", "--", sys.executable,
         str(tmp_path / "p.py"), str(tmp_path / "pids"), "300"], cwd=tmp_path,
        capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")})
    assert again.returncode == 3, again.stderr    # its only trial timed out
    match = re.search(r"killed (\d+) process\(es\) left running by an earlier", again.stderr)
    assert match and int(match.group(1)) >= len(left), again.stderr
    assert _survivors(tmp_path / "pids", wait_s=5.0) == []
