"""Issue 24: signals other than Ctrl-C. SIGTERM (timeout, CI, docker stop, systemd, Slurm),
SIGHUP (a closed terminal), SIGQUIT and SIGUSR1 to the driver, to its process group, or to
every process of the run at once (systemd's and Slurm's way), mid-trial: the run is marked
interrupted, lock and reserve go, nothing of the payload survives, the interrupted trial
leaves no record, one line names the signal, the exit code is 128 + n, and the same command
resumes without losing a finished record. SIGKILL cannot be caught: the run it leaves reads as
interrupted, never as running."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from aorta_testing import REPO, interruptible, run_aorta
from test_driver_kills import PAYLOAD, _survivors, _warden_of

RECIPE = "schema_version: 1\nticket: k\ntrials: 2\n"
SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1]


def _argv(tmp_path: Path) -> list[str]:
    return ["sweep", "run", "--recipe", str(tmp_path / "r.yaml"), "--output",
            str(tmp_path / "out"), "--", sys.executable, str(tmp_path / "p.py"),
            str(tmp_path / "pids"), "1.5"]


def _start(tmp_path: Path) -> subprocess.Popen[str]:
    (tmp_path / "p.py").write_text(PAYLOAD)
    (tmp_path / "r.yaml").write_text(RECIPE)
    (tmp_path / "pids").mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    # A group of its own, as a job under `timeout` or a terminal's shell has.
    return subprocess.Popen(interruptible([sys.executable, "-m", "aorta", *_argv(tmp_path)]),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, start_new_session=True)


def _in_second_trial(tmp_path: Path) -> list[int]:
    """Wait until trial_0 is recorded and trial_1's payload has started its daemons; the
    payload's pids (the payload first)."""
    first = tmp_path / "out/k/cells/default/trial_0/result.json"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        files = [f for f in (tmp_path / "pids").glob("*.pids") if len(f.read_text().split()) == 2]
        if first.exists() and len(files) == 2:
            second = max(files, key=lambda f: f.stat().st_mtime)
            return [int(second.stem), *map(int, second.read_text().split())]
        time.sleep(0.02)
    raise AssertionError("the second trial never started")


def _records(run: Path) -> dict[str, str]:
    return {str(p.relative_to(run)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in run.glob("cells/*/*/result.json")}


# "everything": the driver, its warden and the payload at once, as systemd and Slurm do.
CASES = [(s, t) for s in SIGNALS for t in ("driver", "group")] + [
    (signal.SIGTERM, "everything"), (signal.SIGHUP, "everything")]


@pytest.mark.parametrize(("sig", "target"), CASES,
                         ids=[f"{signal.Signals(s).name}-{t}" for s, t in CASES])
def test_a_signal_takes_the_ctrl_c_path(tmp_path: Path, sig: int, target: str) -> None:
    driver = _start(tmp_path)
    payload = _in_second_trial(tmp_path)
    warden = _warden_of(driver.pid)
    if target == "driver":
        os.kill(driver.pid, sig)
    else:
        os.killpg(driver.pid, sig)
    if target == "everything":
        assert warden is not None
        for pid in (warden, *payload):
            with contextlib.suppress(ProcessLookupError):    # the driver was quicker
                os.kill(pid, sig)
    _, err = driver.communicate(timeout=60)
    name = signal.Signals(sig).name
    assert driver.returncode == 128 + sig, err
    said = [line for line in err.splitlines() if "interrupted" in line]
    assert said == [f"aorta: interrupted by {name}; what finished is kept, and the same "
                    f"command resumes the run"], err
    assert "Traceback" not in err
    run = tmp_path / "out" / "k"
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    assert not (run / ".aorta.lock").exists() and not (run / ".aorta.reserve").exists()
    assert not list(run.glob("cells/*/*/.running.json"))
    assert _survivors(tmp_path / "pids", wait_s=10.0) == []
    # The stopped trial is no result (not a `fail` "killed by SIGTERM"): resume reruns it.
    kept = _records(run)
    assert list(kept) == ["cells/default/trial_0/result.json"]
    status = run_aorta("sweep", "status", str(run))
    assert status.stdout.startswith(f"run k ({run}): interrupted"), status.stdout
    again = run_aorta(*_argv(tmp_path), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "(1 run now)" in again.stdout
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    now = _records(run)
    assert len(now) == 2 and {k: now[k] for k in kept} == kept
    assert _survivors(tmp_path / "pids", wait_s=5.0) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_signal_to_the_warden_alone_stops_the_sweep(tmp_path: Path, sig: int) -> None:
    driver = _start(tmp_path)
    _in_second_trial(tmp_path)
    warden = _warden_of(driver.pid)
    assert warden is not None
    os.kill(warden, sig)
    _, err = driver.communicate(timeout=60)
    assert driver.returncode == 1, err
    assert "aorta: error: aorta's trial warden stopped unexpectedly: the trial's processes " \
           "were killed, the run is marked interrupted and the same command resumes it" in err
    assert "Traceback" not in err
    run = tmp_path / "out" / "k"
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    assert not (run / ".aorta.lock").exists() and not (run / ".aorta.reserve").exists()
    assert _survivors(tmp_path / "pids", wait_s=10.0) == []
    kept = _records(run)
    assert list(kept) == ["cells/default/trial_0/result.json"]   # no error for the lost trial
    again = run_aorta(*_argv(tmp_path), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert len(_records(run)) == 2


def test_sigkill_leaves_a_run_that_reads_interrupted_and_resumes(tmp_path: Path) -> None:
    driver = _start(tmp_path)
    _in_second_trial(tmp_path)
    driver.kill()
    driver.communicate(timeout=60)
    run = tmp_path / "out" / "k"
    assert json.loads((run / "run.json").read_text())["status"] == "running"   # on disk
    assert (run / ".aorta.lock").exists()
    status = run_aorta("sweep", "status", str(run), "--json")
    assert json.loads(status.stdout)["status"] == "interrupted", status.stdout
    report = run_aorta("report", str(run))
    assert report.returncode == 0, report.stderr
    assert "interrupted" in (run / "report.html").read_text()
    assert _survivors(tmp_path / "pids", wait_s=10.0) == []
    kept = _records(run)
    again = run_aorta(*_argv(tmp_path), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    now = _records(run)
    assert len(now) == 2 and {k: now[k] for k in kept} == kept
    assert json.loads(run_aorta("sweep", "status", str(run), "--json").stdout)["status"] \
        == "complete"


def test_a_lock_whose_pid_names_another_process_is_not_a_live_run(tmp_path: Path) -> None:
    """The pid in the lock lives, but it started at another time: it is not the driver."""
    run = tmp_path / "k"
    assert run_aorta("sweep", "run", "--output", str(tmp_path), "--ticket", "k", "--",
                     sys.executable, "-c", "pass").returncode == 0
    doc = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**doc, "status": "running"}))
    with open(f"/proc/{os.getpid()}/stat") as fh:
        ticks = int(fh.read().rsplit(")", 1)[1].split()[19])
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()

    def status_with(lock: dict[str, object]) -> str:
        (run / ".aorta.lock").write_text(json.dumps(lock))
        return str(json.loads(run_aorta("sweep", "status", str(run), "--json").stdout)["status"])

    me = {"pid": os.getpid(), "host": socket.gethostname(), "boot_id": boot}
    assert status_with({**me, "start_ticks": ticks}) == "running"
    assert status_with({**me, "start_ticks": ticks - 1}) == "interrupted"
    assert status_with({**me, "start_ticks": ticks, "boot_id": "another boot"}) == "interrupted"
    assert status_with({**me, "host": "another-host"}) == "running"    # cannot tell: running
    (run / ".aorta.lock").unlink()
    assert json.loads(run_aorta("sweep", "status", str(run), "--json").stdout)["status"] \
        == "interrupted"


def _python(tmp_path: Path, script: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run(interruptible([sys.executable, "-c", textwrap.dedent(script)]),
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_aorta_sweep_stopped_by_sigterm_raises_interrupted(tmp_path: Path) -> None:
    proc = _python(tmp_path, """
        import os, signal, sys
        import aorta
        from aorta.base.errors import Interrupted
        stop = f"import os, time; os.kill({os.getpid()}, {int(signal.SIGTERM)}); time.sleep(60)"
        try:
            aorta.sweep(command=[sys.executable, "-c", stop], output="out", trials=3)
        except Interrupted as exc:
            print("interrupted by", exc.signum, signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    """)
    assert proc.stdout.strip() == f"interrupted by {int(signal.SIGTERM)} True", proc.stderr
    run = tmp_path / "out" / "adhoc"
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    assert not (run / ".aorta.lock").exists() and not _records(run)


def test_aorta_sweep_keeps_the_program_s_handlers_and_threads(tmp_path: Path) -> None:
    """A handler the program set stays its own; from another thread none is touched."""
    proc = _python(tmp_path, """
        import os, signal, sys, threading
        import aorta
        got = []
        signal.signal(signal.SIGTERM, lambda signum, frame: got.append(signum))
        poke = f"import os; os.kill({os.getpid()}, {int(signal.SIGTERM)})"
        run = aorta.sweep(command=[sys.executable, "-c", poke], output="out", trials=2)
        print(run.outcome.status, len(got))
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        done = []
        worker = threading.Thread(target=lambda: done.append(aorta.sweep(
            command=[sys.executable, "-c", "pass"], output="out", ticket="t").outcome.status))
        worker.start()
        worker.join()
        print(done[0], signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)
    """)
    assert proc.stdout.split("\n")[:2] == ["complete 2", "complete True"], proc.stderr
