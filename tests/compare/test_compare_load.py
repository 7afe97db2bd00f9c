"""Reading run directories: samples from passing trials only, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from aorta.comparison.load import RunRef, load_run, pair_cells, parse_ref
from aorta.base.errors import UserError
from aorta.store.files import write_json

from compare_helpers import kernels, make_run, timed_cell, trial


def test_passing_trials_give_samples_and_the_rest_are_counted(tmp_path: Path):
    run = make_run(tmp_path, "r", {"c": [
        trial("c", 0, wall=1.0, rocprof_gpu_time_ms=5.0),
        trial("c", 1, wall=1.1, rocprof_gpu_time_ms=5.5),
        trial("c", 2, "fail", wall=9.0, rocprof_gpu_time_ms=99.0),
        trial("c", 3, "error", wall=None),
    ]}, trials_per_cell=5)
    cell = load_run(RunRef(run)).cells["c"]
    assert cell.metrics["wall_s"] == (1.0, 1.1)
    assert cell.metrics["rocprof_gpu_time_ms"] == (5.0, 5.5)     # the failed 99 is not here
    t = cell.trials
    assert (t.passed, t.failed, t.errored, t.missing, t.total) == (2, 1, 1, 1, 5)


def test_unreadable_result_counts_as_missing(tmp_path: Path):
    run = make_run(tmp_path, "r", {"c": timed_cell("c", [1.0, 1.0])})
    (run / "cells" / "c" / "trial_1" / "result.json").write_text("{truncated")
    cell = load_run(RunRef(run)).cells["c"]
    assert (cell.trials.passed, cell.trials.missing) == (1, 1)


def test_kernel_tables_skip_rows_that_are_not_durations(tmp_path: Path):
    table = [
        {"name": "good", "calls": 2, "total_ms": 1.5},
        {"name": "good", "calls": 1, "total_ms": 0.5},           # repeated: summed
        {"name": "nan", "calls": 1, "total_ms": float("nan")},   # becomes null on disk
        {"name": "negative", "calls": 1, "total_ms": -1.0},
        {"name": "", "calls": 1, "total_ms": 1.0},
        {"name": "untrusted_calls", "calls": None, "total_ms": 2.0},
    ]
    run = make_run(tmp_path, "r", {"c": [trial("c", 0, rocprof_kernels=table,
                                               rocprof_top_kernels=["good"])]})
    tables = load_run(RunRef(run)).cells["c"].tables
    assert set(tables) == {"rocprof_kernels"}       # a list of names is not a table
    (only,) = tables["rocprof_kernels"]
    assert only["good"].total_ms == 2.0 and only["good"].calls == 3
    assert only["untrusted_calls"].calls is None
    assert set(only) == {"good", "untrusted_calls"}


def test_parse_ref(tmp_path: Path):
    assert parse_ref("runs/a") == RunRef(Path("runs/a"))
    assert parse_ref("runs/a:naive") == RunRef(Path("runs/a"), "naive")
    odd = tmp_path / "with:colon"
    odd.mkdir()
    assert parse_ref(str(odd)) == RunRef(odd)         # an existing path wins
    with pytest.raises(UserError, match="nothing after"):
        parse_ref("runs/a:")
    with pytest.raises(UserError, match="empty"):
        parse_ref("")


def test_errors_name_the_problem(tmp_path: Path):
    with pytest.raises(UserError, match="no such directory"):
        load_run(RunRef(tmp_path / "nope"))
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="not a directory"):
        load_run(RunRef(tmp_path / "file"))
    make_run(tmp_path / "output", "quickstart", {"c": timed_cell("c", [1.0])})
    with pytest.raises(UserError, match="no run.json.*runs inside it: quickstart"):
        load_run(RunRef(tmp_path / "output"))
    newer = make_run(tmp_path, "newer", {"c": timed_cell("c", [1.0])})
    write_json(newer / "run.json", {"schema_version": 99})
    with pytest.raises(UserError, match="newer aorta"):
        load_run(RunRef(newer))
    (tmp_path / "garbled").mkdir()
    (tmp_path / "garbled" / "run.json").write_text("[")
    with pytest.raises(UserError, match="unreadable"):
        load_run(RunRef(tmp_path / "garbled"))
    run = make_run(tmp_path, "r", {"a": timed_cell("a", [1.0]), "b": timed_cell("b", [1.0])})
    with pytest.raises(UserError, match="no cell 'z'; its cells are a, b"):
        load_run(RunRef(run, "z"))


def test_pairing(tmp_path: Path):
    one = load_run(RunRef(make_run(tmp_path, "one", {"a": timed_cell("a", [1.0]),
                                                     "b": timed_cell("b", [1.0])})))
    two = load_run(RunRef(make_run(tmp_path, "two", {"b": timed_cell("b", [1.0]),
                                                     "c": timed_cell("c", [1.0])})))
    assert [label for label, _, _ in pair_cells(one, two)] == ["b"]
    a_only = load_run(RunRef(tmp_path / "one", "a"))
    c_only = load_run(RunRef(tmp_path / "two", "c"))
    assert [label for label, _, _ in pair_cells(a_only, c_only)] == ["a -> c"]
    with pytest.raises(UserError, match="no cell 'a' to compare with"):
        pair_cells(a_only, two)
    three = load_run(RunRef(make_run(tmp_path, "three", {"z": timed_cell("z", [1.0])})))
    with pytest.raises(UserError, match="no cell in common.*BASE:cell NEW:cell"):
        pair_cells(one, three)


def test_cells_found_on_disk_even_when_not_listed(tmp_path: Path):
    run = make_run(tmp_path, "r", {"a": timed_cell("a", [1.0])})
    extra = trial("late", 0)
    write_json(run / "cells" / "late" / "trial_0" / "result.json", extra.to_json())
    assert list(load_run(RunRef(run)).cells) == ["a", "late"]


def test_kernel_helper_shape():
    assert kernels(k=1.0) == [{"name": "k", "calls": 1, "total_ms": 1.0}]
