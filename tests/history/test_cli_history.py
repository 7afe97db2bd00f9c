"""`aorta history add|show|report` in-process, and the CI gate's exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aorta.cli import main
from history_helpers import series_runs

SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def stepped(tmp_path: Path) -> list[Path]:
    return series_runs(tmp_path / "runs", [1.0] * 6 + [1.5] * 2)


def _add(runs: list[Path], db: str) -> None:
    assert main(["history", "add", *map(str, runs), "--db", db]) == 0


def test_add_show_report(db_url: str, stepped: list[Path], tmp_path: Path,
                         capsys: pytest.CaptureFixture[str]) -> None:
    _add(stepped, db_url)
    out = capsys.readouterr().out
    assert out.count("recorded ") == len(stepped) and "bench-1 (NVIDIA H200)" in out
    assert main(["history", "show", "--db", db_url, "--metric", "wall_s"]) == 0
    out = capsys.readouterr().out
    assert "<- SLOWER" in out and "first at" in out and "run006" in out
    page = tmp_path / "page.html"
    assert main(["history", "report", "--db", db_url, "--output", str(page)]) == 0
    html = page.read_text()
    assert "<svg" in html and 'class="change"' in html and "<script" not in html


def test_fail_on_exits_4_only_for_recent_regressions(db_url: str, stepped: list[Path],
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    _add(stepped, db_url)
    base = ["history", "show", "--db", db_url, "--fail-on", "slower"]
    assert main([*base, "--recent", "2"]) == 4        # the step is at the 7th of 8 runs
    assert "aorta: regression: SLOWER" in capsys.readouterr().err
    assert main([*base, "--recent", "1"]) == 0        # ... not at the newest
    assert main([*base, "--recent", "0"]) == 4        # 0: any change
    assert main(["history", "show", "--db", db_url, "--fail-on", "wall_s", "--recent", "0"]) == 4


@pytest.mark.parametrize("correction", ["none", "holm", "bh"])
def test_fail_on_takes_a_correction(db_url: str, stepped: list[Path], correction: str) -> None:
    _add(stepped, db_url)
    assert main(["history", "show", "--db", db_url, "--fail-on", "slower", "--recent", "2",
                 "--correction", correction]) == 4


def test_fail_on_a_metric_nobody_recorded_is_an_error(db_url: str, stepped: list[Path],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    _add(stepped, db_url)
    assert main(["history", "show", "--db", db_url, "--fail-on", "wal_s"]) == 2
    assert "no series of this metric" in capsys.readouterr().err


def test_json_has_changes(db_url: str, stepped: list[Path],
                          capsys: pytest.CaptureFixture[str]) -> None:
    _add(stepped, db_url)
    capsys.readouterr()
    assert main(["history", "show", "--db", db_url, "--metric", "wall_s", "--format",
                 "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    (series,) = doc["series"]
    (change,) = series["changes"]
    assert change["after"]["name"] == "run006" and change["regression"]


def test_no_matching_series(tmp_path: Path, stepped: list[Path],
                            capsys: pytest.CaptureFixture[str]) -> None:
    db = str(tmp_path / "h.sqlite")
    _add(stepped, db)
    assert main(["history", "show", "--db", db, "--cell", "nope"]) == 2
    assert "no series matches --cell 'nope'" in capsys.readouterr().err


def test_importing_aorta_and_help_load_no_sqlalchemy() -> None:
    code = ("import sys, aorta, aorta.history, aorta.cli\n"
            "from aorta.cli import main\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            "main(['history', '--help'])\n"
            "assert 'sqlalchemy' not in sys.modules, 'sqlalchemy imported'\n")
    proc = subprocess.run([sys.executable, "-c", code], env={"PYTHONPATH": str(SRC)},
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
