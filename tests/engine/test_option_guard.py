"""Issue 14: a flag, or the separator, taken as an option's value, and words before `--`, are
refused on one line with exit 2 in every command: nothing is run and nothing is written."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aorta_testing import run_aorta, write_recipe

MARKER = "import pathlib, sys; pathlib.Path(sys.argv[1]).write_text('ran')"


def _one_line_usage_error(proc) -> str:
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    return lines[0]


def test_a_flag_after_output_is_refused_and_nothing_runs(tmp_path: Path):
    recipe = write_recipe(tmp_path, "schema_version: 1\n")
    marker = tmp_path / "ran.txt"
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", "--collect",
                     "cprofile", "--", sys.executable, "-c", MARKER, str(marker), cwd=tmp_path)
    line = _one_line_usage_error(proc)
    assert "--output was given '--collect'" in line and "looks like another flag" in line
    assert not (tmp_path / "--collect").exists()
    assert not marker.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recipe.yaml"]


def test_a_word_before_the_separator_is_refused(tmp_path: Path):
    recipe = write_recipe(tmp_path, "schema_version: 1\n")
    marker = tmp_path / "ran.txt"
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "SMOKE-1", "--", sys.executable, "-c", MARKER, str(marker), cwd=tmp_path)
    line = _one_line_usage_error(proc)
    assert "'SMOKE-1' comes before '--'" in line
    assert not marker.exists() and not (tmp_path / "o").exists()
    plan = run_aorta("sweep", "plan", "--recipe", str(recipe), "SMOKE-1", "--", "echo", "hi",
                     cwd=tmp_path)
    assert "'SMOKE-1' comes before '--'" in _one_line_usage_error(plan)


@pytest.mark.parametrize("args, option, value", [
    (["sweep", "plan", "--recipe", "R", "--output", "--", "echo"], "--output", "--"),
    (["sweep", "plan", "--recipe", "R", "--ticket", "-v", "--", "echo"], "--ticket", "-v"),
    (["sweep", "plan", "--recipe", "--dry-run", "--", "echo"], "--recipe", "--dry-run"),
    (["compare", "--metric", "--fail-on", "a", "b"], "--metric", "--fail-on"),
    (["export", "RUN", "--output", "--format", "csv"], "--output", "--format"),
    (["history", "show", "--db", "--json"], "--db", "--json"),
])
def test_every_command_refuses_a_flag_shaped_value(tmp_path: Path, args, option, value):
    recipe = write_recipe(tmp_path, "schema_version: 1\n")
    proc = run_aorta(*[str(recipe) if a == "R" else a for a in args], cwd=tmp_path)
    line = _one_line_usage_error(proc)
    assert f"{option} was given {value!r}" in line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["recipe.yaml"]


def test_a_negative_number_and_the_commands_own_dashes_stay_values(tmp_path: Path):
    recipe = write_recipe(tmp_path, "schema_version: 1\n")
    proc = run_aorta("sweep", "plan", "--recipe", str(recipe), "--", "echo", "--", "-x",
                     cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "command: echo -- -x" in proc.stdout


@pytest.mark.parametrize("args, said", [
    (["report", "--format", "--"], "--format was given '--', which looks like another flag"),
    (["report", "--format", "--output", "x"], "--format was given '--output'"),
    (["report", "--format=--output", "x"], "--format was given '--output'"),
    (["history", "show", "--top", "--cell", "c"], "--top was given '--cell'"),
    (["report", "RUN", "--format"], "--format needs a value: give --format [html|md|json]"),
    (["sweep", "run", "--recipe"], "--recipe needs a value"),
    (["compare", "a", "b", "--fail-on"], "--fail-on needs a value"),
])
def test_a_typed_or_missing_value_is_refused_on_one_line(tmp_path: Path, args, said):
    """Issue 25: `report --format --` got Click's three-line usage: a choice or a number was
    converted (and refused in Click's words) before the flag check saw it."""
    line = _one_line_usage_error(run_aorta(*args, cwd=tmp_path))
    assert line.startswith("aorta: error: aorta ") and said in line


@pytest.mark.parametrize("args, said", [
    (["report", "--format", "xyz", "."], "aorta report: invalid value for '--format': 'xyz' is "
                                         "not one of 'html', 'md', 'json'; see aorta report --help"),
    (["report", "--bogus"], "aorta report: no such option '--bogus'; see aorta report --help"),
    (["compare", "a"], "aorta compare: missing argument 'NEW'; see aorta compare --help"),
    (["history", "show", "--top", "-3"], "invalid value for '--top': -3 is not in the range"),
    (["bogus"], "aorta: no such command 'bogus'; see aorta --help"),
])
def test_every_usage_error_is_one_line(tmp_path: Path, args, said):
    line = _one_line_usage_error(run_aorta(*args, cwd=tmp_path))
    assert line.startswith("aorta: error: ") and said in line
