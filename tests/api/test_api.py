"""The Python API (issue 15.1): `aorta.open_run`, the trial and kernel frames, `aorta.compare`,
and `aorta export`, on a real H200 run directory (schema 1, migrated when read) and on runs
made here."""

from __future__ import annotations

import csv
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import aorta
from aorta.cli import main
from aorta.base.errors import RunDirError, UserError

H200 = Path(__file__).resolve().parents[1] / "fixtures" / "report" / "h200-proton-softmax"


@pytest.fixture
def h200(tmp_path: Path) -> Path:
    target = tmp_path / "h200"
    shutil.copytree(H200, target)
    return target


def test_import_aorta_stays_light() -> None:
    code = ("import sys, aorta; assert aorta.API_VERSION == 2; "
            "heavy = [m for m in ('pydantic', 'pandas', 'yaml', 'sqlalchemy', 'aorta.api.run') "
            "if m in sys.modules]; print(heavy)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    # API_VERSION loads aorta.api.run (and what it needs to read records), never pandas or pydantic
    assert "pandas" not in done.stdout and "pydantic" not in done.stdout


def test_a_real_run_as_data(h200: Path) -> None:
    run = aorta.open_run(h200)
    assert (run.name, run.status, run.cells, run.collectors) == \
        ("gpu-report", "complete", ["c1024", "c4096", "bad"], ["proton"])
    assert len(run.trials) == 9 and all(t.state == "complete" for t in run.trials)
    assert run.env is not None and run.env["nvidia"][0]["name"] == "NVIDIA H200"
    passing = list(run.results("c1024", passing=True))
    assert len(passing) == 3 and passing[0].captures["proton"].state == "ok"   # migrated v1
    assert [r.verdict for r in run.results("bad")] == ["fail"] * 3
    assert repr(run) == "<aorta run 'gpu-report': complete, 9/9 trials>"


def test_trials_frame(h200: Path) -> None:
    pytest.importorskip("pandas")
    df = aorta.open_run(h200).trials_frame()
    assert len(df) == 9 and set(df["capture_proton"]) == {"ok", "missing"}
    ok = df[df["cell"] == "c1024"]
    assert (ok["proton_kernel_count"] > 0).all() and (ok["wall_s"] > 0).all()
    bad = df[df["cell"] == "bad"]
    assert bad["proton_gpu_time_ms"].isna().all()         # never a zero for a failed trial
    assert bad["wall_s"].isna().all() and (bad["verdict"] == "fail").all()


def test_kernels_frame(h200: Path) -> None:
    pytest.importorskip("pandas")
    k = aorta.open_run(h200).kernels_frame()
    assert set(k["cell"]) == {"c1024", "c4096"} and set(k["table"]) == {"proton_kernels"}
    per_trial = k.groupby(["cell", "trial"])["total_ms"].sum()
    results = {(r.cell, r.name): r.metrics["proton_gpu_time_ms"]
               for r in aorta.open_run(h200).results(passing=True)}
    for key, total in per_trial.items():
        assert math.isclose(total, results[key], rel_tol=1e-9)


def test_polars_frame(h200: Path) -> None:
    pytest.importorskip("polars")
    assert aorta.open_run(h200).trials_frame(backend="polars").height == 9


def test_corrupt_and_missing_trials_are_rows_with_a_state(h200: Path) -> None:
    pytest.importorskip("pandas")
    (h200 / "cells/c1024/trial_1/result.json").write_text("[]")
    shutil.rmtree(h200 / "cells/c4096/trial_2")
    df = aorta.open_run(h200).trials_frame()
    states = dict(zip(df["trial"] + "@" + df["cell"], df["state"]))
    assert states["trial_1@c1024"] == "corrupt" and states["trial_2@c4096"] == "missing"


def test_compare_returns_what_the_cli_prints(h200: Path, capsys: pytest.CaptureFixture[str]
                                            ) -> None:
    comparison = aorta.compare(f"{h200}:c1024", f"{h200}:c4096")
    rows = {r.name: r for r in comparison.rows()}
    assert rows["proton_gpu_time_ms"].ratio > 1.5               # 4x the rows of data
    assert rows["proton_gpu_time_ms"].verdict == "UNCERTAIN"    # 3 trials a side: no verdict
    assert main(["compare", f"{h200}:c1024", f"{h200}:c4096", "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    printed_rows = [r for c in printed["cells"] for r in c["metrics"] + c["kernels"]]
    assert sorted((r["name"], r["verdict"], r["ratio"]) for r in printed_rows) == \
        sorted((r.name, r.verdict, r.ratio) for r in comparison.rows())


def test_compare_stays_a_function_once_the_comparison_package_is_loaded() -> None:
    import aorta.comparison.build  # noqa: F401  (a submodule import must not shadow the API)

    assert callable(aorta.compare)


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="not an aorta run directory"):
        aorta.open_run(tmp_path)
    with pytest.raises(UserError, match="backend 'arrow'"):
        aorta.open_run(H200).trials_frame(backend="arrow")


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_round_trips(h200: Path, tmp_path: Path, fmt: str,
                            capsys: pytest.CaptureFixture[str]) -> None:
    pd = pytest.importorskip("pandas")
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / "exported"
    assert main(["export", str(h200), "--format", fmt, "--output", str(out)]) == 0
    run = aorta.open_run(h200)
    for name, expected in (("trials", run.trials_frame()), ("kernels", run.kernels_frame())):
        path = out / f"{name}.{fmt}"
        got = pd.read_csv(path) if fmt == "csv" else pd.read_parquet(path)
        assert list(got.columns) == list(expected.columns) and len(got) == len(expected)
        for column in ("wall_s", "total_ms", "proton_gpu_time_ms"):
            if column in expected:
                pd.testing.assert_series_equal(got[column].astype(float),
                                               expected[column].astype(float),
                                               check_names=False)
    assert main(["export", str(h200)]) == 0               # default: into the run directory
    with open(h200 / "export" / "trials.csv") as fh:
        assert sum(1 for _ in csv.reader(fh)) == 10
