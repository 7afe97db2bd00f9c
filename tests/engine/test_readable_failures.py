"""Failures a user can read (issue 14): what a failing sweep says on the terminal, in perf.md,
in `sweep status` and in its exit code, through the real `aorta` CLI."""

from __future__ import annotations

import json
import sys
import textwrap
import time
from pathlib import Path

import pytest

from aorta.rendering import md_text

from aorta_testing import bare_python, run_aorta, trial_result, write_recipe


FAILING = """\
    import sys
    for i in range(3):
        print(f"progress {i * 50}%", end="\\r", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    raise ValueError("size must be positive\\x1b[31m\\x07")
    """


@pytest.fixture
def failing(payload) -> Path:
    return payload(FAILING, "fail.py")


def test_a_failing_trial_says_why_and_where_its_stderr_is(tmp_path: Path, failing: Path):
    out = tmp_path / "o"
    proc = run_aorta("sweep", "run", "--output", str(out), "--trials", "2", "--",
                     sys.executable, str(failing))
    log = out / "adhoc" / "cells" / "default" / "trial_0" / "stderr.log"
    want = "exit code 1: ValueError: size must be positive\\x07"
    assert "[1/2] default/trial_0 fail" in proc.stderr
    assert f"({want})" in proc.stderr
    assert f"  stderr: {log}" in proc.stderr
    assert "\x1b" not in proc.stderr + proc.stdout and "\x07" not in proc.stderr
    assert trial_result(out / "adhoc", "default", 0)["reason"] == want
    perf = (out / "adhoc" / "perf.md").read_text()
    assert (f"- default: {md_text(want)} (trial_0, trial_1; see "
            f"cells/default/trial_0/stderr.log)") in perf
    assert f"default: {want} (trial_0, trial_1;" in proc.stdout


def test_a_long_last_line_is_cut(tmp_path: Path, payload):
    script = payload("import sys\nsys.exit('x' * 5000)\n")
    run_aorta("sweep", "run", "--output", str(tmp_path / "o"), "--", sys.executable, str(script))
    reason = trial_result(tmp_path / "o" / "adhoc", "default", 0)["reason"]
    assert reason.startswith("exit code 1: xxx") and reason.endswith("...")
    assert len(reason) < 250


def test_a_sweep_where_no_trial_passed_exits_3(tmp_path: Path, failing: Path):
    proc = run_aorta("sweep", "run", "--output", str(tmp_path / "o"), "--",
                     sys.executable, str(failing))
    assert proc.returncode == 3, proc.stderr
    assert "aorta: no trial passed" in proc.stdout
    again = run_aorta("sweep", "run", "--output", str(tmp_path / "o"), "--",
                      sys.executable, str(failing))
    assert again.returncode == 3      # the run, not only this visit, measured nothing


def test_some_failures_still_exit_0_without_strict(tmp_path: Path, payload):
    script = payload("""\
        import sys
        sys.exit(1 if sys.argv[1] == "bad" else 0)
        """)
    recipe = write_recipe(tmp_path, """\
        schema_version: 1
        ticket: mixed
        axes:
          mode: {good: {args: [good]}, bad: {args: [bad]}}
        """)
    argv = ["--recipe", str(recipe), "--output", str(tmp_path / "o"), "--",
            sys.executable, str(script)]
    assert run_aorta("sweep", "run", *argv).returncode == 0
    assert run_aorta("sweep", "run", "--strict", *argv).returncode == 3


def test_baseline_trials_are_labelled_everywhere(tmp_path: Path, payload):
    script = payload("print('hi')\n")
    recipe = write_recipe(tmp_path, """\
        schema_version: 1
        ticket: base
        trials: 2
        baseline: true
        collect: [cprofile]
        """)
    out = tmp_path / "o"
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(out), "--",
                     sys.executable, str(script))
    assert proc.returncode == 0, proc.stderr
    assert "default/baseline_0 pass" in proc.stderr and "default/baseline_1 pass" in proc.stderr
    assert "default/trial_1 pass" in proc.stderr
    assert "2/2 trial(s) passed, baseline (no collector) 2/2 passed (4 run now" in proc.stdout
    status = run_aorta("sweep", "status", str(out / "base"))
    assert "4 trial(s) (2 profiled, 2 baseline with no collector)" in status.stdout
    assert any(line.split()[:2] == ["default", "baseline_1"]
               for line in status.stdout.splitlines())
    trials = json.loads(run_aorta("sweep", "status", "--json", str(out / "base")).stdout)["trials"]
    assert {t["name"]: t["baseline"] for t in trials} == {      # issue 25: JSON marks them too
        "trial_0": False, "baseline_0": True, "trial_1": False, "baseline_1": True}
    perf = (out / "base" / "perf.md").read_text()
    assert "| cell | trials | pass | fail | error | missing | baseline pass | note |" in perf
    assert "| default | 2 | 2 | 0 | 0 | 0 | 2/2 |" in perf


def test_a_rerun_that_runs_nothing_keeps_the_runs_times(tmp_path: Path, payload):
    script = payload("print('hi')\n")
    argv = ["sweep", "run", "--output", str(tmp_path / "o"), "--", sys.executable, str(script)]
    assert run_aorta(*argv).returncode == 0
    run_json = tmp_path / "o" / "adhoc" / "run.json"
    before = json.loads(run_json.read_text())
    time.sleep(1.1)
    assert run_aorta(*argv).returncode == 0
    after = json.loads(run_json.read_text())
    assert (after["started_at"], after["finished_at"]) == \
        (before["started_at"], before["finished_at"])
    assert after["history"][-1]["trials_to_run"] == 0
    status = run_aorta("sweep", "status", str(tmp_path / "o" / "adhoc"))
    assert f"finished {before['finished_at']}" in status.stdout
    report = run_aorta("report", str(tmp_path / "o" / "adhoc"), "--format", "md")
    when = next(line for line in report.stdout.splitlines() if "when (UTC)" in line)
    assert f"{before['started_at']} to {before['finished_at']}" in when
    assert "resumed" not in when


def test_status_of_a_parent_directory_names_the_runs_inside(tmp_path: Path, payload):
    script = payload("print('hi')\n")
    run_aorta("sweep", "run", "--output", str(tmp_path / "o"), "--", sys.executable, str(script))
    proc = run_aorta("sweep", "status", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert "not an aorta run directory (no run.json); runs inside it: adhoc" in proc.stderr


def test_dry_run_says_how_many_trials_would_run(tmp_path: Path, payload):
    script = payload("print('hi')\n")
    opts = ["--output", str(tmp_path / "o"), "--trials", "2"]
    command = ["--", sys.executable, str(script)]
    first = run_aorta("sweep", "run", *opts, "--dry-run", *command)
    assert "would run 2 of 2 trial(s)" in first.stdout
    assert not (tmp_path / "o").exists()
    assert run_aorta("sweep", "run", *opts, *command).returncode == 0
    assert "would run 0 of 2 trial(s) (2 already complete)" in \
        run_aorta("sweep", "run", *opts, "--dry-run", *command).stdout
    more = run_aorta("sweep", "plan", "--output", str(tmp_path / "o"), "--trials", "5", "--",
                     sys.executable, str(script))
    assert "would run 3 of 5 trial(s) (2 already complete)" in more.stdout


def test_verbose_prints_each_trials_launch(tmp_path: Path, payload):
    script = payload("print('hi')\n")
    proc = run_aorta("sweep", "run", "-v", "--collect", "cprofile", "--output",
                     str(tmp_path / "o"), "--", sys.executable, str(script))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    i = next(n for n, line in enumerate(lines) if "default/trial_0 pass" in line)
    assert lines[i + 1].startswith(f"  argv: {sys.executable} -m aorta.launchers.cprofile_run")
    assert any(line == "  cprofile: capture ok" for line in lines[i + 1:i + 5])
    quiet = run_aorta("sweep", "run", "--fresh", "--collect", "cprofile", "--output",
                      str(tmp_path / "o"), "--", sys.executable, str(script))
    assert "argv:" not in quiet.stderr


@pytest.mark.torch
def test_preflight_refuses_a_command_whose_python_lacks_torch(tmp_path: Path, payload):
    """Issue 14: `-- python` without torch ran every torch trial to 'exit code 2'."""
    bare = bare_python(tmp_path / "venv")
    script = payload("print('hi')\n")
    proc = run_aorta("sweep", "run", "--collect", "torch", "--output", str(tmp_path / "o"),
                     "--", str(bare), str(script))
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"aorta: error: collector torch cannot attach: torch is not "
                                  f"importable by {bare}")
    assert "No module named 'torch'" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.torch
def test_a_launcher_that_cannot_attach_makes_an_error_trial(tmp_path: Path, payload):
    """The launcher's own import of torch fails (a stand-in torch that imports for a check
    but not in a launcher): the trial is an error, with the launcher's reason on the
    terminal and in perf.md, not `fail` with `exit code 2`."""
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text(textwrap.dedent("""\
        import sys
        if sys.argv[0] != "-c":
            raise ImportError("stand-in torch: broken build")
        """))
    script = payload("print('hi')\n")
    recipe = write_recipe(tmp_path, f"""\
        schema_version: 1
        ticket: attach
        env: {{PYTHONPATH: {str(site)!r}}}
        collect: [torch]
        """)
    bare = bare_python(tmp_path / "venv")
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", str(bare), str(script))
    assert proc.returncode == 3, proc.stderr
    result = trial_result(tmp_path / "o" / "attach", "default", 0)
    assert result["verdict"] == "error"
    want = (f"the torch collector could not attach inside the payload's process: torch is "
            f"not importable by {bare}: stand-in torch: broken build")
    assert result["reason"] == want
    assert "default/trial_0 error" in proc.stderr and want in proc.stderr
    assert want in (tmp_path / "o" / "attach" / "perf.md").read_text()


@pytest.mark.torch
def test_an_activity_the_build_lacks_is_an_attach_error(tmp_path: Path, payload):
    script = payload("print('hi')\n")
    recipe = write_recipe(tmp_path, """\
        schema_version: 1
        ticket: xpu
        collect:
          torch: {activities: xpu}
        """)
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, str(script), timeout=300)
    result = trial_result(tmp_path / "o" / "xpu", "default", 0)
    assert result["verdict"] == "error", result["reason"]
    assert result["reason"].startswith("the torch collector could not attach")
    assert proc.returncode == 3


@pytest.mark.parametrize("collector,fix", [
    ("proton", "use mode: env instead"), ("torch", "use mode: env instead"),
    ("cprofile", "use another collector for native commands")])
def test_a_command_a_collector_can_never_take_is_refused_before_machine_checks(
        tmp_path: Path, collector: str, fix: str):
    """Issue 14: proton's cli mode in front of a native binary said "Triton is not installed"
    on a machine without Triton; the refusal that holds everywhere comes first."""
    proc = run_aorta("sweep", "run", "--collect", collector, "--output", str(tmp_path / "o"),
                     "--", "/bin/true")
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"aorta: error: {collector}: needs a Python script launch")
    assert fix in proc.stderr and "not installed" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_the_static_refusal_comes_before_the_interpreter_check(tmp_path: Path):
    bare = bare_python(tmp_path / "venv")
    proc = run_aorta("sweep", "run", "--collect", "torch", "--output", str(tmp_path / "o"),
                     "--", str(bare), "-m", "json.tool")
    assert proc.returncode == 2
    assert "cannot wrap 'python -m json.tool'" in proc.stderr
    assert "not importable" not in proc.stderr
