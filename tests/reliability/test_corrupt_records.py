"""Issue 11: a hand-corrupted or foreign `result.json` is `corrupt` (shown by status and the
report, rerun by the sweep with the old file kept aside), never a crash; a record from a
newer aorta is refused, naming the versions, and never deleted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from aorta.cli import main

RECIPE = "schema_version: 1\nticket: rec\ntrials: 3\n"


def _good(run: Path) -> dict[str, Any]:
    return json.loads((run / "cells/default/trial_0/result.json").read_text())


def _edit(**fields: Any) -> Any:
    return lambda good: {**good, **fields}


CORRUPTIONS: dict[str, Any] = {
    "empty-list": "[]", "null": "null", "string": '"result"', "number": "7",
    "truncated": lambda good: json.dumps(good)[:40],
    "garbage-bytes": b"\x00\xff\xfe garbage",
    "empty-file": "",
    "deep-nesting": "[" * 100_000 + "]" * 100_000,
    "nan-literal": lambda good: json.dumps(good).replace('"wall_s": ', '"wall_s": NaN, "x": '),
    "wall-text": _edit(wall_s="abc"), "wall-negative": _edit(wall_s=-1.0),
    "metrics-list": _edit(metrics=[1, 2]), "warnings-number": _edit(warnings=5),
    "cell-traversal": _edit(cell="../../x"), "cell-other": _edit(cell="other"),
    "index-text": _edit(index="zz"), "index-negative": _edit(index=-1),
    "index-huge": _edit(index=10**30), "index-other": _edit(index=2),
    "pass-with-exit-3": _edit(exit_code=3), "verdict-unknown": _edit(verdict="maybe"),
    "schema-zero": _edit(schema_version=0), "schema-text": _edit(schema_version="2"),
    "argv-null": _edit(argv=None), "env-not-text": _edit(env_overlay={"A": 1}),
    "captures-garbage": _edit(captures={"x": {"state": "great"}}),
    "logs-garbage": _edit(logs={"stdout": {"written": -1, "kept": 0}}),
    "metric-too-deep": _edit(metrics={"m": json.loads("[" * 40 + "]" * 40)}),
    "missing-verdict": lambda good: {k: v for k, v in good.items() if k != "verdict"},
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("finished")
    (root / "r.yaml").write_text(RECIPE)
    assert main(["sweep", "run", "--recipe", str(root / "r.yaml"), "--output",
                 str(root / "out"), "--", "true"]) == 0
    return root / "out" / "rec"


def _copy(finished: Path, tmp_path: Path) -> Path:
    import shutil

    run = tmp_path / "out" / "rec"
    shutil.copytree(finished, run)
    return run


@pytest.mark.parametrize("label", list(CORRUPTIONS))
def test_a_corrupt_record_is_shown_then_rerun_and_kept_aside(
        finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], label: str) -> None:
    run = _copy(finished, tmp_path)
    target = run / "cells/default/trial_1/result.json"
    corruption = CORRUPTIONS[label]
    data = corruption(_good(run)) if callable(corruption) else corruption
    if isinstance(data, dict):
        data = json.dumps(data)
    target.write_bytes(data if isinstance(data, bytes) else data.encode())
    before = target.read_bytes()
    capsys.readouterr()

    assert main(["sweep", "status", "--json", str(run)]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["counts"] == {"complete": 2, "corrupt": 1}, status["counts"]
    for fmt in ("html", "md", "json"):
        assert main(["report", str(run), "--format", fmt]) == 0
        out = capsys.readouterr()
        assert "Traceback" not in out.err
    assert "corrupt" in (run / "report.html").read_text()

    (tmp_path / "r.yaml").write_text(RECIPE)
    code = main(["sweep", "run", "--recipe", str(tmp_path / "r.yaml"), "--output",
                 str(tmp_path / "out"), "--", "true"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "1 trial record(s) were corrupt" in err
    kept = run / "quarantine/default/trial_1.1/result.json"
    assert kept.read_bytes() == before                        # kept aside, not deleted
    assert json.loads(target.read_text())["verdict"] == "pass"  # and run again


def test_a_record_from_a_newer_aorta_is_refused_and_never_deleted(
        finished: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = _copy(finished, tmp_path)
    target = run / "cells/default/trial_2/result.json"
    target.write_text(json.dumps({**_good(run), "index": 2, "schema_version": 99}))
    (tmp_path / "r.yaml").write_text(RECIPE)
    (run / "cells/default/trial_0/result.json").unlink()   # something left to run
    capsys.readouterr()
    code = main(["sweep", "run", "--recipe", str(tmp_path / "r.yaml"), "--output",
                 str(tmp_path / "out"), "--", "true"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "newer aorta (trial schema 99; this aorta reads up to 2)" in err
    assert json.loads(target.read_text())["schema_version"] == 99
    assert not (run / "cells/default/trial_0/result.json").exists()   # nothing ran
    assert main(["sweep", "status", str(run)]) == 0
    assert "corrupt" in capsys.readouterr().out


@pytest.mark.parametrize("content", ["[]", "{ nope", '{"run": "x", "schema_version": 99}',
                                     '{"run": "x", "schema_version": 2, "cells": ["../x"],'
                                     ' "command": [], "trials_per_cell": 1, "status": "complete"}'])
def test_a_corrupt_run_record_is_one_clear_error(finished: Path, tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str],
                                                 content: str) -> None:
    run = _copy(finished, tmp_path)
    (run / "run.json").write_text(content)
    for argv in (["sweep", "status", str(run)], ["report", str(run)],
                 ["compare", str(run), str(run)]):
        capsys.readouterr()
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("aorta: error: ") and err.count("\n") == 1, err
