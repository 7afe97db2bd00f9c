"""`aorta sweep run --history`: the finished run lands in the history as `history add` puts it."""

from __future__ import annotations

import sys
from pathlib import Path

from aorta_testing import run_aorta, write_recipe

RECIPE = """\
    schema_version: 1
    trials: 2
    axes:
      size:
        small: {args: [--size, "1"]}
        large: {args: [--size, "2"]}
    """


def _sweep(tmp_path: Path, *flags: str, env: dict[str, str] | None = None):
    recipe = write_recipe(tmp_path, RECIPE, name="hist.yaml")
    return run_aorta("sweep", "run", "--recipe", str(recipe), "--output",
                     str(tmp_path / "out"), *flags, "--", sys.executable, "-c", "import sys",
                     env=env)


def test_history_defaults_to_a_database_inside_output(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "AORTA_HISTORY_DB"}
    done = _sweep(tmp_path, "--history", env=env)
    assert done.returncode == 0, done.stderr
    assert "history: recorded" in done.stdout and "2 cell(s)" in done.stdout
    db = tmp_path / "out" / "history.sqlite"
    assert db.is_file()
    shown = run_aorta("history", "show", "--db", str(db), "--metric", "wall_s")
    assert shown.returncode == 0, shown.stderr
    assert "wall_s" in shown.stdout


def test_history_db_names_the_database_and_a_rerun_replaces(db_url: str,
                                                            tmp_path: Path) -> None:
    first = _sweep(tmp_path, "--history-db", db_url)
    assert first.returncode == 0, first.stderr
    again = _sweep(tmp_path, "--history-db", db_url)
    assert again.returncode == 0, again.stderr
    assert "history: replaced" in again.stdout


def test_an_unusable_database_keeps_the_run_and_says_how_to_record_it(tmp_path: Path) -> None:
    done = _sweep(tmp_path, "--history-db", "mysql://user@host/db")
    assert done.returncode == 2
    assert "unsupported database" in done.stderr and "aorta history add" in done.stderr
    assert "Traceback" not in done.stderr
    assert (tmp_path / "out" / "hist" / "run.json").is_file()
