"""Issue 24: a history holding what no aorta writes (text, a blob, NULL, an infinity or NaN
where a number must be, a negative count, bad JSON, a missing table or column, a newer schema)
is refused by `show` and `report` as damaged, naming the table and the row: one line, exit 2,
never a TypeError."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from aorta_testing import run_aorta
from history_helpers import series_runs

# (SQL that damages the database, the words the refusal must hold)
SQLITE_DAMAGE = {
    "text value": ("UPDATE samples SET value = 'fast' WHERE rowid = 2",
                   "table samples, row (run_id 1, cell 'c1', metric 'wall_s', trial 1): "
                   "value is 'fast', not a finite number"),
    "blob value": ("UPDATE samples SET value = x'00ff' WHERE rowid = 1",
                   "value is b'\\x00\\xff', not a finite number"),
    "infinite value": ("UPDATE samples SET value = 9e999 WHERE rowid = 1",
                       "value is inf, not a finite number"),
    "NULL value": ("ALTER TABLE samples RENAME TO old; CREATE TABLE samples (run_id, cell, "
                   "metric, trial, value); INSERT INTO samples SELECT * FROM old; DROP TABLE old;"
                   "UPDATE samples SET value = NULL WHERE rowid = 1",
                   "table samples, row (run_id 1, cell 'c1', metric 'wall_s', trial 0): "
                   "value is NULL"),
    "text trial": ("UPDATE samples SET trial = 'x' WHERE rowid = 1", "trial is 'x', not an integer"),
    "negative trial": ("UPDATE samples SET trial = -1 WHERE rowid = 1", "trial is -1, below 0"),
    "negative count": ("UPDATE runs SET trials_total = -3", "table runs, row (id 1): "
                       "trials_total is -3, below 0"),
    "bad command": ("UPDATE runs SET command = '[1, 2'", "command is '[1, 2', not a JSON list"),
    "blob collectors": ("UPDATE contexts SET collect = x'01'", "table contexts, row (id 1): "
                        "collect is b'\\x01', not text"),
    "blob run name": ("UPDATE runs SET name = x'01'", "name is b'\\x01', not text"),
    "missing table": ("DROP TABLE kernels", "table kernels is missing"),
    "missing column": ("ALTER TABLE samples DROP COLUMN metric",
                       "table samples has no column metric"),
    "newer schema": ("INSERT INTO aorta_schema VALUES (99, 'future', '2030')",
                     "history schema 99 was written by a newer aorta"),
}


@pytest.fixture
def recorded(tmp_path: Path) -> str:
    db = str(tmp_path / "h.sqlite")
    done = run_aorta("history", "add", *map(str, series_runs(tmp_path / "runs", [1.0, 1.1])),
                     "--db", db)
    assert done.returncode == 0, done.stderr
    return db


def _refused(db: str, tmp_path: Path, words: str, damaged: bool = True) -> None:
    for command in (["show", "--metric", "wall_s"],
                    ["report", "--output", str(tmp_path / "page.html")]):
        done = run_aorta("history", *command, "--db", db)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.startswith("aorta: error: ") and words in done.stderr, done.stderr
        assert ("damaged history: " in done.stderr) == damaged
        assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.mark.parametrize("case", list(SQLITE_DAMAGE))
def test_sqlite_damage_is_refused_by_name(recorded: str, tmp_path: Path, case: str) -> None:
    sql, words = SQLITE_DAMAGE[case]
    with sqlite3.connect(recorded) as conn:
        conn.executescript(sql)
    conn.close()
    _refused(recorded, tmp_path, words, damaged=case != "newer schema")


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_postgresql_non_finite_value_is_refused(db_url: str, tmp_path: Path, value: str) -> None:
    """Typed columns keep text out of PostgreSQL, but its floats take NaN and infinities."""
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite stores NaN as NULL and is covered above")
    import psycopg

    done = run_aorta("history", "add", *map(str, series_runs(tmp_path / "runs", [1.0])),
                     "--db", db_url)
    assert done.returncode == 0, done.stderr
    schema = db_url.split("search_path%3D", 1)[1]
    with psycopg.connect(db_url.split("?", 1)[0], autocommit=True) as conn:
        conn.execute(f"UPDATE {schema}.samples SET value = %s::float8 WHERE metric = 'wall_s' "
                     f"AND trial = 1", (value,))
    _refused(db_url, tmp_path, "metric 'wall_s', trial 1): value is "
                               f"{ {'NaN': 'nan', 'Infinity': 'inf'}.get(value, '-inf') }, "
                               "not a finite number")
