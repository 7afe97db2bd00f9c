"""Issue 25: a rerun says what it does (resume, or nothing to run), and a failing trial whose
stderr is empty points at stdout, where the payload printed its error (the quickstart's own
`--size 0` does this), in the sweep's output, perf.md and the report."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from aorta_testing import run_aorta, trial_result

SAYS_ON_STDOUT = "import sys; print('progress 1/3'); print('bad --size: must be 1..2000'); sys.exit(2)"


def test_a_rerun_says_whether_it_resumes_or_has_nothing_to_run(tmp_path: Path):
    run = ["sweep", "run", "--output", str(tmp_path / "o"), "--trials", "2", "--",
           sys.executable, "-c", "pass"]
    first = run_aorta(*run)
    assert first.returncode == 0 and "resuming" not in first.stderr
    again = run_aorta(*run)
    assert "aorta: nothing to run: all 2 trial(s) already complete" in again.stderr
    assert "resuming" not in again.stderr
    (tmp_path / "o/adhoc/cells/default/trial_1/result.json").unlink()
    partial = run_aorta(*run)
    assert "aorta: resuming: 1 of 2 trial(s) already complete, 1 to run" in partial.stderr
    fresh = run_aorta(*run[:2], "--fresh", *run[2:])
    assert "resuming" not in fresh.stderr and "nothing to run" not in fresh.stderr


def test_an_error_printed_on_stdout_is_shown_and_its_log_named(tmp_path: Path):
    proc = run_aorta("sweep", "run", "--output", str(tmp_path / "o"), "--", sys.executable,
                     "-c", SAYS_ON_STDOUT)
    run_dir = tmp_path / "o" / "adhoc"
    reason = "exit code 2: bad --size: must be 1..2000 (on stdout)"
    assert trial_result(run_dir, "default", 0)["reason"] == reason
    assert f"stdout: {run_dir}/cells/default/trial_0/stdout.log" in proc.stderr
    assert "see cells/default/trial_0/stdout.log" in proc.stdout
    assert "see cells/default/trial_0/stdout.log" in (run_dir / "perf.md").read_text()
    md = run_aorta("report", str(run_dir), "--format", "md").stdout
    assert "End of stdout (stderr had no line to read):" in md and "stderr was empty." not in md
    failure = json.loads(run_aorta("report", str(run_dir), "--format", "json").stdout)
    failure = failure["failures"][0]
    assert failure["stderr_tail"] == "" and "bad --size" in failure["stdout_tail"]


def test_stderr_stays_the_log_when_it_says_something(tmp_path: Path):
    code = "import sys; print('all fine so far'); sys.exit('ValueError: size must be positive')"
    proc = run_aorta("sweep", "run", "--output", str(tmp_path / "o"), "--", sys.executable,
                     "-c", code)
    run_dir = tmp_path / "o" / "adhoc"
    assert trial_result(run_dir, "default", 0)["reason"] == \
        "exit code 1: ValueError: size must be positive"
    assert "stderr: " in proc.stderr and "stdout.log" not in proc.stderr
    md = run_aorta("report", str(run_dir), "--format", "md").stdout
    assert "End of stderr:" in md and "End of stdout" not in md


def test_a_stderr_line_ending_like_the_stdout_mark_still_names_stderr(tmp_path: Path):
    """The quoted line is the payload's: its own words cannot redirect the user to stdout.log."""
    code = "import sys; sys.exit('real error (on stdout)')"
    proc = run_aorta("sweep", "run", "--output", str(tmp_path / "o"), "--", sys.executable,
                     "-c", code)
    run_dir = tmp_path / "o" / "adhoc"
    assert f"stderr: {run_dir}/cells/default/trial_0/stderr.log" in proc.stderr
    assert "see cells/default/trial_0/stderr.log" in proc.stdout
