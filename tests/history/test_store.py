"""Recording runs and reading series back, on SQLite and PostgreSQL."""

from __future__ import annotations

from pathlib import Path

import pytest

from aorta.base.errors import UserError
from aorta.history import record_run
from aorta.history.db import open_history
from aorta.history.store import Filters, load_history
from history_helpers import series_runs, trial, write_run


def _series(db_url: str, **filters: object) -> dict[str, list[tuple[float, ...]]]:
    with open_history(db_url) as db:
        found = load_history(db, Filters(**filters))[0]  # type: ignore[arg-type]
    return {f"{s.cell}/{s.name}": [p.values for p in s.points] for s in found}


def test_runs_become_series_in_time_order(db_url: str, tmp_path: Path) -> None:
    runs = series_runs(tmp_path, [1.0, 1.0, 2.0])
    for run in reversed(runs):                    # recorded out of order
        record_run(run, db_url)
    walls = _series(db_url, metric="wall_s")["c1/wall_s"]
    assert [round(min(v)) for v in walls] == [1, 1, 2]
    assert all(len(v) == 3 for v in walls)


def test_recording_again_replaces_the_run(db_url: str, tmp_path: Path) -> None:
    run = series_runs(tmp_path, [1.0])[0]
    first = record_run(run, db_url)
    again = record_run(run, db_url)
    assert not first.replaced and again.replaced
    assert len(_series(db_url, metric="wall_s")["c1/wall_s"]) == 1


def test_only_passing_trials_and_ok_captures_count(db_url: str, tmp_path: Path) -> None:
    good = {"nsys_capture": "ok", "nsys_gpu_time_ms": 5.0,
            "nsys_kernels": [{"name": "gemm", "calls": 2, "total_ms": 4.0}]}
    empty = {"nsys_capture": "empty", "nsys_gpu_time_ms": 0.0,
             "nsys_kernels": [{"name": "gemm", "calls": 0, "total_ms": 0.0}]}
    cells = {"c1": [trial("c1", 0, 1.0, metrics=good), trial("c1", 1, 1.1, metrics=empty),
                    trial("c1", 2, 9.0, verdict="fail", metrics=good)]}
    record_run(write_run(tmp_path, "r", "2026-01-01T00:00:00+00:00", cells,
                         collectors=["nsys"]), db_url)
    series = _series(db_url)
    assert series["c1/nsys_gpu_time_ms"] == [(5.0,)]        # the empty capture is left out
    assert series["c1/nsys_kernels:gemm"] == [(4.0,)]
    assert series["c1/wall_s"] == [(1.0, 1.1)]              # the failed trial is left out


def test_context_splits_hosts_and_collector_options(db_url: str, tmp_path: Path) -> None:
    cells = {"c1": [trial("c1", 0, 1.0)]}
    record_run(write_run(tmp_path, "a", "2026-01-01T00:00:00+00:00", cells), db_url)
    record_run(write_run(tmp_path, "b", "2026-01-02T00:00:00+00:00", cells,
                         collectors=["cprofile"],
                         collect_yaml="collect:\n  cprofile: {sort: cumulative}\n"), db_url)
    record_run(write_run(tmp_path, "c", "2026-01-03T00:00:00+00:00", cells), db_url,
               host="fleet")
    with open_history(db_url) as db:
        contexts = {(s.context.host, s.context.collect) for s in load_history(db)[0]}
    assert len(contexts) == 3


def test_gpu_and_host_come_from_env_json(db_url: str, tmp_path: Path) -> None:
    run = series_runs(tmp_path, [1.0])[0]
    done = record_run(run, db_url)
    assert "bench-1" in done.context and "NVIDIA H200" in done.context
    assert _series(db_url, gpu="NVIDIA H200", host="bench-1")
    assert not _series(db_url, gpu="none")


def test_not_a_run_directory_is_a_user_error(db_url: str, tmp_path: Path) -> None:
    with pytest.raises(UserError, match="not an aorta run directory"):
        record_run(tmp_path, db_url)


def test_reading_a_missing_sqlite_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no history there yet"):
        with open_history(str(tmp_path / "none.sqlite"), create=False):
            pass
