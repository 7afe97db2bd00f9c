"""`aorta.sweep` and `aorta.plan`: a sweep from Python, with the CLI's validation, resume,
lock and records; and docs/api.md's example, run as written."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import aorta
from aorta.base.errors import RunDirError, UserError
from aorta_testing import REPO, run_aorta

QUICKSTART = REPO / "examples" / "quickstart"


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    shutil.copytree(QUICKSTART, tmp_path / "examples" / "quickstart")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _command() -> list[str]:
    return [sys.executable, "examples/quickstart/matmul.py", "--size", "24"]


def test_the_documented_example_runs_and_prints_what_the_docs_say(here: Path) -> None:
    text = (REPO / "docs" / "api.md").read_text()
    code, shown = re.search(r"run by tests/api/test_api_sweep.py -->\n```python\n(.*?)```\n\n"
                            r"which prints[^\n]*\n\n```\n(.*?)```", text, re.S).groups()
    (here / "example.py").write_text(code)
    done = subprocess.run([sys.executable, "example.py"], capture_output=True, text=True,
                          timeout=300, check=True)
    said, expected = done.stdout.splitlines(), shown.splitlines()
    timed = re.compile(r"\d+\.\d+ s$")
    assert [timed.sub("", line) for line in said] == [timed.sub("", line) for line in expected]


def test_a_sweep_from_python_writes_what_the_command_writes(here: Path) -> None:
    run = aorta.sweep("examples/quickstart/recipe.yaml", command=_command(), trials=2,
                      output="api")
    assert isinstance(run, aorta.Run) and run.outcome is not None
    assert (run.status, run.outcome.status, run.outcome.ran) == ("complete", "complete", 6)
    assert run.outcome.exit_code() == 0 and run.outcome.exit_code(strict=True) == 0
    assert [t.result.verdict for t in run.trials if t.result] == ["pass"] * 6
    cli = run_aorta("sweep", "run", "--recipe", "examples/quickstart/recipe.yaml", "--trials",
                    "2", "--output", "cli", "--", *_command(), cwd=here)
    assert cli.returncode == 0, cli.stderr
    for name in ("run.json", "cells/naive/trial_0/result.json"):
        mine = json.loads((here / "api/quickstart" / name).read_text())
        theirs = json.loads((here / "cli/quickstart" / name).read_text())
        assert sorted(mine) == sorted(theirs), name
    assert json.loads((here / "api/quickstart/run.json").read_text())["fingerprint"] == \
        json.loads((here / "cli/quickstart/run.json").read_text())["fingerprint"]
    assert (here / "api/quickstart/recipe.resolved.yaml").read_text() == \
        (here / "cli/quickstart/recipe.resolved.yaml").read_text()


def test_a_second_call_resumes_and_a_changed_one_is_refused(here: Path) -> None:
    first = aorta.sweep(command=_command(), trials=2, output="o")
    assert first.outcome is not None and first.outcome.ran == 2
    again = aorta.sweep(command=_command(), trials=3, output="o")
    assert again.outcome is not None and again.outcome.ran == 1      # extends, reruns nothing
    with pytest.raises(RunDirError, match="--fresh"):
        aorta.sweep(command=[*_command(), "--kernel", "blocked"], output="o")
    fresh = aorta.sweep(command=[*_command(), "--kernel", "blocked"], output="o", fresh=True)
    assert fresh.outcome is not None and fresh.outcome.ran == 1


def test_refusals_raise_the_commands_message_and_write_nothing(here: Path) -> None:
    for kwargs, words in (({"collect": "nope"}, "unknown collector 'nope'"),
                          ({"trials": 0}, "--trials (1 to 10000): trials: Input should be "
                                          "greater than or equal to 1, got 0"),
                          ({"executor": "kubernetes"}, "executor.kind: 'kubernetes'"),
                          ({"skip_remote_probe": True}, "--skip-remote-probe applies only")):
        with pytest.raises(UserError, match=re.escape(words)):
            aorta.sweep(command=_command(), output="refused", **kwargs)
    with pytest.raises(UserError, match="no command to run"):
        aorta.sweep(output="refused")
    assert not (here / "refused").exists()


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"trials": True}, "aorta.sweep: trials: Input should be a valid integer, got True"),
    ({"trials": "3"}, "aorta.sweep: trials: Input should be a valid integer, got '3'"),
    ({"baseline": "yes"}, "aorta.sweep: baseline: Input should be a valid boolean"),
    ({"timeout": "x"}, "aorta.sweep: timeout: Input should be a valid number"),
    ({"gpus": 5}, "aorta.sweep: gpus: Input should be a valid string"),
    ({"output": 5}, "aorta.sweep: output: Input should be a valid string"),
    ({"env": {1: 2}}, "aorta.sweep: env[1]: Input should be a valid string"),
    ({"command": '"x'}, "aorta.plan: command: No closing quotation"),
    ({"command": ["python3", "a\0b"]}, "the command: an argument contains a NUL byte"),
    ({"env": {"A": "b\0c"}}, "aorta.plan: env: 'A' cannot be passed to a program"),
])
def test_arguments_of_the_wrong_type_or_unpassable_are_refused_by_name(
        here: Path, kwargs: dict[str, object], words: str) -> None:
    """A wrong type is never coerced ("3", True) nor written into run.json, where it would
    make the run directory unreadable to the next call."""
    with pytest.raises(UserError, match=re.escape(words)):
        aorta.sweep(**{"command": _command(), "output": "refused", **kwargs})  # type: ignore[arg-type]
    assert not (here / "refused").exists()
    run = aorta.sweep(command=tuple(_command()), output=Path("typed"), trials=1, gpus=None,
                      env=os.environ)
    assert run.status == "complete"


def test_a_run_that_no_trial_passed_exits_3_and_a_plan_writes_nothing(here: Path) -> None:
    failing = [sys.executable, "-c", "import sys; sys.exit(1)"]
    planned = aorta.plan(command=failing, output="p")
    assert planned.plan_lines()[-1].startswith("total: 1 trial(s); would run 1 of 1")
    assert not (here / "p").exists()
    run = aorta.sweep(command=failing, output="p")
    assert run.outcome is not None and run.outcome.none_passed
    assert run.outcome.exit_code() == 3 and run.trials[0].result.verdict == "fail"


def test_the_lock_keeps_a_second_sweep_out(here: Path) -> None:
    slow = [sys.executable, "-c", "import time; time.sleep(30)"]
    holder = subprocess.Popen([sys.executable, "-m", "aorta", "sweep", "run", "--output",
                               "locked", "--timeout", "60", "--", *slow],
                              stderr=subprocess.PIPE, text=True)
    try:
        lock = here / "locked" / "adhoc" / ".aorta.lock"
        for _ in range(300):
            if lock.exists() and lock.stat().st_size:
                break
            subprocess.run(["sleep", "0.05"], check=True)
        with pytest.raises(RunDirError, match="another aorta run holds it"):
            aorta.sweep(command=slow, output="locked")
    finally:
        holder.terminate()
        holder.wait(timeout=60)
