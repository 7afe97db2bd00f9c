"""Issue 24: a run that is not complete (`running`, `interrupted`) is refused by `history add`
unless asked for; its points are then marked wherever shown and can neither make nor hide a
step, nor change what --fail-on decides."""

from __future__ import annotations

import json
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from aorta.store.run_dir import RunStore
from aorta_testing import run_aorta
from history_helpers import series_runs


def _as_left(run: Path, status: str) -> AbstractContextManager[object]:
    """A `running` run is one whose driver still holds its lock (without it, the run reads as
    interrupted): this test process holds it meanwhile."""
    return RunStore(run).lock() if status == "running" else nullcontext()


def _add(db: str, *runs: Path, allow: bool = False) -> None:
    done = run_aorta("history", "add", *map(str, runs), "--db", db,
                     *(["--allow-incomplete"] if allow else []))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("status", ["running", "interrupted"])
def test_add_refuses_a_run_that_is_not_complete(tmp_path: Path, status: str) -> None:
    (run,) = series_runs(tmp_path / "runs", [1.0], status=status)
    db = tmp_path / "h.sqlite"
    with _as_left(run, status):
        done = run_aorta("history", "add", str(run), "--db", str(db))
        assert done.returncode == 2, done.stderr
        assert done.stderr.startswith(
            f"aorta: error: {run}: run.json says {status}, not complete")
        assert "--allow-incomplete" in done.stderr and len(done.stderr.splitlines()) == 1
        assert not db.exists()                   # refused before the database is touched
        done = run_aorta("history", "add", str(run), "--db", str(db), "--allow-incomplete")
    assert done.returncode == 0 and f"recorded {run} ({status}: marked" in done.stdout


def test_an_incomplete_point_cannot_make_a_step(db_url: str, tmp_path: Path) -> None:
    flat = series_runs(tmp_path / "runs", [1.0] * 6)
    (slow,) = series_runs(tmp_path / "runs", [1.5], first=6, status="interrupted")
    _add(db_url, *flat)
    _add(db_url, slow, allow=True)
    gate = ("--fail-on", "slower", "--recent", "0")
    done = run_aorta("history", "show", "--db", db_url, "--metric", "wall_s", *gate)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "run006 (interrupted)" in done.stdout and "changes: none detected" in done.stdout
    assert "left out of change detection" in done.stdout
    listing = run_aorta("history", "show", "--db", db_url)
    assert "7 (1 incomplete)" in listing.stdout and "(interrupted)" in listing.stdout
    doc = json.loads(run_aorta("history", "show", "--db", db_url, "--metric", "wall_s",
                               "--format", "json").stdout)
    points = doc["series"][0]["points"]
    assert [p["run"]["complete"] for p in points] == [True] * 6 + [False]
    assert points[-1]["run"]["status"] == "interrupted"
    page = tmp_path / "page.html"
    done = run_aorta("history", "report", "--db", db_url, "--output", str(page), *gate)
    assert done.returncode == 0, done.stderr
    assert "1 incomplete run(s) marked, not used for changes" in done.stdout
    html = page.read_text()
    assert 'class="hollow"' in html and "1 run(s) were not complete" in html
    assert "(interrupted): median" in html


def test_an_incomplete_point_cannot_hide_a_step(db_url: str, tmp_path: Path) -> None:
    """The step at the newest complete run still fails --recent 1 with a newer, incomplete run
    that looks like the old level."""
    runs = series_runs(tmp_path / "runs", [1.0] * 6 + [1.5])
    (back,) = series_runs(tmp_path / "runs", [1.0], first=7, status="running")
    _add(db_url, *runs)
    with _as_left(back, "running"):
        _add(db_url, back, allow=True)
    done = run_aorta("history", "show", "--db", db_url, "--metric", "wall_s",
                     "--fail-on", "slower", "--recent", "1")
    assert done.returncode == 4, done.stdout + done.stderr
    assert "first at" in done.stderr and "(run run006," in done.stderr
    assert "run007 (running)" in done.stdout
