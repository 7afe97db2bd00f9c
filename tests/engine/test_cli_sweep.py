"""`aorta sweep run` end to end: the real CLI, real subprocesses, real files."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aorta_testing import interruptible, run_aorta, trial_result, write_recipe

PAYLOAD = """
import os, sys, time
mode = sys.argv[1] if len(sys.argv) > 1 else "pass"
print("VAR=" + os.environ.get("AORTA_TEST_VAR", "<unset>"), "CALLER=" + os.environ.get("AORTA_CALLER", "<unset>"))
if mode == "fail":
    sys.exit(3)
if mode == "crash":
    import signal; os.kill(os.getpid(), signal.SIGSEGV)
if mode == "sleep":
    time.sleep(float(sys.argv[2]))
"""


@pytest.fixture
def script(payload):
    return payload(PAYLOAD)


def test_pass_fail_crash_are_data_and_strict_exits_3(tmp_path: Path, script: Path):
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: verdicts
        trials: 2
        env: {AORTA_TEST_VAR: from-recipe}
        axes:
          mode:
            ok: {args: [pass]}
            bad: {args: [fail]}
            boom: {args: [crash]}
    """)
    out = tmp_path / "out"
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--",
                     sys.executable, str(script))
    assert proc.returncode == 0, proc.stderr
    run_dir = out / "verdicts"
    ok, bad, boom = (trial_result(run_dir, c, 1) for c in ("ok", "bad", "boom"))
    assert (ok["verdict"], ok["exit_code"]) == ("pass", 0)
    assert (bad["verdict"], bad["exit_code"]) == ("fail", 3)
    # stderr is empty, so the reason quotes stdout's last line, marked (issue 25)
    assert bad["reason"] == "exit code 3: VAR=from-recipe CALLER=<unset> (on stdout)"
    assert (boom["verdict"], boom["signal"]) == ("fail", signal.SIGSEGV)
    assert "SIGSEGV" in boom["reason"]
    assert ok["argv"] == [sys.executable, str(script), "pass"]
    assert ok["env_overlay"] == {"AORTA_TEST_VAR": "from-recipe"}
    assert "VAR=from-recipe" in (run_dir / "cells/ok/trial_0/stdout.log").read_text()
    assert ok["wall_s"] > 0 and ok["max_rss_mib"] > 0
    matrix = json.loads((run_dir / "matrix.json").read_text())
    cells = {c["name"]: c for c in matrix["cells"]}
    assert (cells["ok"]["passed"], cells["bad"]["failed"], cells["boom"]["failed"]) == (2, 2, 2)
    assert cells["ok"]["metrics"]["wall_s"]["n"] == 2
    assert cells["bad"]["metrics"] == {}       # statistics come from passing trials only
    assert "| bad | 2 | 0 | 2 | 0 | 0 |" in (run_dir / "perf.md").read_text()
    strict = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--strict",
                       "--", sys.executable, str(script))
    assert strict.returncode == 3, strict.stderr
    assert "0 run now" in strict.stdout     # everything resumed, nothing rerun


def test_timeout_is_an_error_and_leaves_no_survivor(tmp_path: Path, payload):
    pidfile = tmp_path / "grandchild.pid"
    script = payload(f"""
        import subprocess, sys, time
        p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
        open({str(pidfile)!r}, "w").write(str(p.pid))
        time.sleep(120)
    """, "hang.py")
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: hang
        timeout_per_trial: 1
        kill_grace_s: 1
    """)
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, str(script))
    assert proc.returncode == 3, proc.stderr     # no trial passed: nothing was measured
    result = trial_result(tmp_path / "o" / "hang", "default", 0)
    assert result["verdict"] == "error" and result["timed_out"]
    assert result["reason"].startswith("timed out after 1 s")
    pid = int(pidfile.read_text())
    assert not Path(f"/proc/{pid}").exists() or \
        Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"


def test_missing_command_is_an_error_trial_with_127(tmp_path: Path):
    proc = run_aorta("sweep", "run", "--output", str(tmp_path), "--", "no-such-binary-xyz", "a")
    assert proc.returncode == 3, proc.stderr
    result = trial_result(tmp_path / "adhoc", "default", 0)
    assert (result["verdict"], result["exit_code"], result["launched"]) == ("error", 127, False)
    assert "cannot execute 'no-such-binary-xyz'" in result["reason"]


def test_interrupted_run_resumes_only_missing_trials(tmp_path: Path, script: Path):
    recipe = write_recipe(tmp_path, "schema_version: 1\nticket: resume\ntrials: 4\n")
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe), "--output",
            str(out), "--", sys.executable, str(script), "sleep", "0.6"]
    proc = subprocess.Popen(interruptible(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    first = out / "resume" / "cells" / "default" / "trial_0" / "result.json"
    deadline = time.monotonic() + 60
    while not first.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    run_doc = json.loads((out / "resume" / "run.json").read_text())
    assert run_doc["status"] == "interrupted"
    assert not (out / "resume" / ".aorta.lock").exists()
    done_before = [i for i in range(4) if (out / "resume/cells/default" / f"trial_{i}/result.json").exists()]
    assert 1 <= len(done_before) < 4
    started = json.loads(first.read_text())["started_at"]
    again = run_aorta(*argv[3:])
    assert again.returncode == 0, again.stderr
    assert f"({4 - len(done_before)} run now)" in again.stdout
    assert json.loads(first.read_text())["started_at"] == started
    assert json.loads((out / "resume" / "run.json").read_text())["status"] == "complete"


def test_changed_command_is_refused_and_fresh_starts_over(tmp_path: Path, script: Path):
    out = tmp_path / "out"
    assert run_aorta("sweep", "run", "--output", str(out), "--", sys.executable, str(script)).returncode == 0
    changed = run_aorta("sweep", "run", "--output", str(out), "--", sys.executable, str(script), "fail")
    assert changed.returncode == 2
    assert "holds a run of a different recipe or command" in changed.stderr
    assert "--fresh" in changed.stderr and "Traceback" not in changed.stderr
    assert trial_result(out / "adhoc", "default", 0)["verdict"] == "pass"   # nothing lost
    fresh = run_aorta("sweep", "run", "--output", str(out), "--fresh", "--", sys.executable,
                      str(script), "fail")
    assert fresh.returncode == 3      # its only trial failed
    assert trial_result(out / "adhoc", "default", 0)["verdict"] == "fail"


def test_live_lock_refuses_and_stale_lock_is_taken_over(tmp_path: Path, script: Path):
    run_dir = tmp_path / "adhoc"
    run_dir.mkdir()
    lock = run_dir / ".aorta.lock"
    import socket
    lock.write_text(json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started_at": "x"}))
    proc = run_aorta("sweep", "run", "--output", str(tmp_path), "--", sys.executable, str(script))
    assert proc.returncode == 2 and "another aorta run holds it" in proc.stderr
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock.write_text(json.dumps({"pid": dead.pid, "host": socket.gethostname(), "started_at": "x"}))
    proc = run_aorta("sweep", "run", "--output", str(tmp_path), "--", sys.executable, str(script))
    assert proc.returncode == 0, proc.stderr
    assert not lock.exists()


def test_dry_run_writes_nothing_and_prints_the_wrapped_launch(tmp_path: Path, script: Path):
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        trials: 3
        collect: [cprofile]
        axes: {mode: {a: {args: [pass]}, b: {args: [fail]}}}
    """)
    out = tmp_path / "out"
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--dry-run",
                     "--", sys.executable, str(script))
    assert proc.returncode == 0, proc.stderr
    assert not out.exists()
    assert "cells (2):" in proc.stdout and "total: 6 trial(s)" in proc.stdout
    assert (f"-m aorta.launchers.cprofile_run --out {out}/{tmp_path.name}/cells/a/trial_0/"
            f"cprofile/profile.pstats -- {script} pass") in proc.stdout


def test_usage_errors_exit_2_without_traceback(tmp_path: Path, script: Path):
    cases = [
        ("sweep", "run", "--output", str(tmp_path)),                         # no command
        ("sweep", "run", "--output", str(tmp_path), sys.executable, str(script)),   # no "--"
        ("sweep", "run", "--trials", "0", "--", "true"),
        ("sweep", "run", "--recipe", str(tmp_path / "absent.yaml"), "--", "true"),
        ("sweep", "run", "--collect", "nope", "--", "true"),
    ]
    for args in cases:
        proc = run_aorta(*args, cwd=tmp_path)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "Traceback" not in proc.stderr
    assert not (tmp_path / "aorta_results").exists()


def test_cprofile_measures_a_python_payload_and_refuses_a_native_one(tmp_path: Path, script: Path):
    out = tmp_path / "out"
    proc = run_aorta("sweep", "run", "--collect", "cprofile", "--output", str(out), "--",
                     sys.executable, str(script))
    assert proc.returncode == 0, proc.stderr
    result = trial_result(out / "adhoc", "default", 0)
    m = result["metrics"]
    assert result["captures"]["cprofile"]["state"] == "ok" and m["cprofile_call_count"] > 0
    assert m["cprofile_time_ms"] > 0 and len(m["cprofile_top_functions"]) == 5
    # A collector that cannot attach stops the sweep before any trial: never run unprofiled.
    native = run_aorta("sweep", "run", "--collect", "cprofile", "--output", str(tmp_path / "n"),
                       "--", "/bin/echo", "payload-ran")
    assert native.returncode == 2
    assert "cprofile: needs a Python script launch" in native.stderr
    assert "payload-ran" not in native.stdout
    assert not (tmp_path / "n").exists()


def test_rerun_script_reproduces_the_trial(tmp_path: Path, script: Path):
    recipe = write_recipe(tmp_path, "schema_version: 1\nticket: recipe\nenv: {AORTA_TEST_VAR: 'it works'}\n")
    assert run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, str(script), "fail").returncode == 3
    rerun = tmp_path / "o" / "recipe" / "cells" / "default" / "trial_0" / "rerun.sh"
    proc = subprocess.run([str(rerun)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 3
    assert "VAR=it works" in proc.stdout


def test_clean_environment_drops_caller_variables(tmp_path: Path, script: Path):
    recipe = write_recipe(tmp_path, "schema_version: 1\nticket: recipe\nenv_passthrough_mode: clean\nenv: {AORTA_TEST_VAR: v}\n")
    env = {**os.environ, "AORTA_CALLER": "leak"}
    assert run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"), "--",
                     sys.executable, str(script), env=env).returncode == 0
    out = (tmp_path / "o/recipe/cells/default/trial_0/stdout.log").read_text()
    assert "VAR=v" in out and "CALLER=<unset>" in out
    assert run_aorta("sweep", "run", "--output", str(tmp_path / "i"), "--", sys.executable,
                     str(script), env=env).returncode == 0
    assert "CALLER=leak" in (tmp_path / "i/adhoc/cells/default/trial_0/stdout.log").read_text()
