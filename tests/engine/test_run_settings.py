"""Issue 14: `--ticket` and `--env-passthrough-mode` override the recipe; mode `file` writes the
child's environment to the trial's child.env (0600, no credential in clear), names it in
AORTA_ENV_FILE, and refuses an environment a KEY=VALUE file cannot hold."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from aorta.run.launch import env_file_problem
from aorta_testing import run_aorta, trial_result, write_recipe

# The payload checks what it was given: the file exists, lists itself and the recipe's variable.
READ_ENV_FILE = """
import os, sys
path = os.environ["AORTA_ENV_FILE"]
lines = open(path).read().splitlines()
assert f"AORTA_ENV_FILE={path}" in lines, lines
assert "RECIPE_VAR=from-recipe" in lines, lines
print("env file ok", len(lines))
"""

TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
PASSWORD = "correct-horse-battery-staple"


def _caller_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if "\n" not in v}
    env.update(extra)
    return env


def test_ticket_and_env_mode_flags_replace_the_recipes(tmp_path: Path, payload):
    script = payload(READ_ENV_FILE)
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: from-recipe
        env_passthrough_mode: inherit
        env: {RECIPE_VAR: from-recipe}
    """)
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--ticket", "from-flag", "--env-passthrough-mode", "file", "--",
                     sys.executable, str(script),
                     env=_caller_env(GITHUB_TOKEN=TOKEN, DB_PASSWORD=PASSWORD,
                                     NOTES=f"see {TOKEN}"))
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / "o" / "from-flag"
    assert not (tmp_path / "o" / "from-recipe").exists()
    result = trial_result(run_dir, "default", 0)
    assert result["verdict"] == "pass", result["reason"]
    env_file = run_dir / "cells" / "default" / "trial_0" / "child.env"
    assert stat.S_IMODE(env_file.stat().st_mode) == 0o600
    lines = env_file.read_text().splitlines()
    assert "GITHUB_TOKEN=<redacted>" in lines and "DB_PASSWORD=<redacted>" in lines
    assert "NOTES=see <redacted>" in lines
    assert result["env_overlay"]["AORTA_ENV_FILE"] == str(env_file)
    for path in run_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert TOKEN.encode() not in data and PASSWORD.encode() not in data, path
    resolved = (run_dir / "recipe.resolved.yaml").read_text()
    assert "env_passthrough_mode: file" in resolved and "ticket: from-flag" in resolved


def test_an_environment_a_line_file_cannot_hold_is_refused_by_name(tmp_path: Path):
    recipe = write_recipe(tmp_path, "schema_version: 1\nenv_passthrough_mode: file\n")
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, "-c", "pass",
                     env=_caller_env(MULTI_LINE="first\nsecret-second-line"))
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert "MULTI_LINE" in proc.stderr and "secret-second-line" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_env_file_problem_names_keys_and_values_it_cannot_write():
    assert env_file_problem({"A": "1", "B": "x y=z"}) is None
    assert "A=B" in (env_file_problem({"A=B": "1"}) or "")
    assert "the value of V" in (env_file_problem({"V": "a\r\nb"}) or "")
    # A credential's value is written as <redacted>: its newlines never reach the file.
    assert env_file_problem({"SSH_PRIVATE_KEY": "-----BEGIN\nabc\n-----END"}) is None


def test_a_multi_line_secret_is_written_redacted(tmp_path: Path):
    recipe = write_recipe(tmp_path, "schema_version: 1\nenv_passthrough_mode: file\n")
    key = "-----BEGIN KEY-----\nc2VjcmV0LWJvZHktbGluZQ\n-----END KEY-----"
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, "-c", "pass",
                     env=_caller_env(DEPLOY_PRIVATE_KEY=key))
    assert proc.returncode == 0, proc.stderr
    [env_file] = (tmp_path / "o").rglob("child.env")
    assert "DEPLOY_PRIVATE_KEY=<redacted>" in env_file.read_text().splitlines()
    for path in (tmp_path / "o").rglob("*"):
        if path.is_file():
            assert b"c2VjcmV0LWJvZHktbGluZQ" not in path.read_bytes(), path


def test_a_variable_the_child_does_not_get_is_not_checked():
    from aorta.collectors.base import Launch
    from aorta.base.errors import UserError
    from aorta.run.launch import refuse_unwritable_env

    caller = {"PATH": "/bin", "BASH_FUNC_f%%": "() {  echo\n}"}
    with pytest.raises(UserError, match="BASH_FUNC_f"):
        refuse_unwritable_env("file", caller, Launch(("x",), {}, frozenset()))
    refuse_unwritable_env("file", caller, Launch(("x",), {}, frozenset({"BASH_FUNC_f%%"})))
    refuse_unwritable_env("inherit", caller, Launch(("x",), {}, frozenset()))


@pytest.mark.parametrize("flags, message", [
    (["--ticket", "../up"], "--ticket: ticket: must be a directory-safe name (letters, digits, "
                            "_ . -, not starting with . or -), got '../up'"),
    (["--env-passthrough-mode", "files"], "'files' is not one of 'inherit', 'clean', 'file'"),
    (["--stop-after-events", "2"], "--stop-after-events requires --max-trials"),
    (["--max-trials", "3"], "--max-trials requires --stop-after-events"),
    (["--stop-after-events", "4", "--max-trials", "3"], "max_trials (3) is below events (4)"),
    (["--stop-after-events", "0", "--max-trials", "3"], "0 is not in the range x>=1"),
    (["--stop-after-events", "1", "--max-trials", "3", "--trials", "2"],
     "--trials: with stop_after the cap on trials per cell is max_trials"),
])
def test_bad_flag_values_exit_2_before_anything_runs(tmp_path: Path, flags, message):
    recipe = write_recipe(tmp_path, "schema_version: 1\n")
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     *flags, "--", sys.executable, "-c", "pass")
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "o").exists()


def test_the_plan_shows_retention_and_the_stop_rule(tmp_path: Path):
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        retain: {on_pass: none}
        stop_after: {events: 1, max_trials: 4, event_verdict: pass}
    """)
    proc = run_aorta("sweep", "plan", "--recipe", str(recipe), "--", "true")
    assert proc.returncode == 0, proc.stderr
    assert "retain: pass none, fail full, error full" in proc.stdout
    assert "stop_after: a cell stops after 1 pass trial(s), at most 4 trial(s)" in proc.stdout
    assert "total: up to 4 trial(s)" in proc.stdout
