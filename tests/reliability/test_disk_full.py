"""Issue 11: a full disk gives one clear error (exit 2), the run marked interrupted, the lock
released, and every finished record intact; the same command resumes once there is space.
Runs on a small tmpfs, which needs the privilege to mount one; skipped (with the reason)
where that is not allowed."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from aorta.cli import main
from aorta_testing import small_filesystem

SIZE = "4m"
# The third trial fills the disk (as a payload writing its own output might), then exits 0.
FILLER = textwrap.dedent("""
    import os, sys
    count = os.path.join(sys.argv[1], "count")
    n = int(open(count).read()) if os.path.exists(count) else 0
    open(count, "w").write(str(n + 1))
    if n == 2:
        try:
            with open(sys.argv[2], "wb") as fh:
                while True:
                    fh.write(b"x" * 65536)
        except OSError:
            pass
""")


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    with small_filesystem(tmp_path / "disk", SIZE) as mount:
        yield mount


def test_a_disk_that_fills_mid_run(small_disk: Path, tmp_path: Path,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "filler.py").write_text(FILLER)
    recipe = tmp_path / "r.yaml"
    recipe.write_text("schema_version: 1\nticket: full\ntrials: 5\n")
    fill = small_disk / "fill.bin"
    argv = ["sweep", "run", "--recipe", str(recipe), "--output", str(small_disk / "out"),
            "--", "python3", str(tmp_path / "filler.py"), str(tmp_path), str(fill)]
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    run = small_disk / "out" / "full"
    assert code == 2, err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("aorta: error:")]
    assert len(lines) == 1 and "no space left on device" in lines[0]
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    assert not (run / ".aorta.lock").exists()
    finished = sorted(p.parent.name for p in run.glob("cells/default/*/result.json"))
    assert finished[:2] == ["trial_0", "trial_1"]
    for name in finished:
        assert json.loads((run / "cells/default" / name / "result.json").read_text())[
            "verdict"] == "pass"

    fill.unlink()
    assert main(argv) == 0, capsys.readouterr().err
    assert len(list(run.glob("cells/default/*/result.json"))) == 5
    assert json.loads((run / "run.json").read_text())["status"] == "complete"


def test_a_disk_full_at_start(small_disk: Path, tmp_path: Path,
                              capsys: pytest.CaptureFixture[str]) -> None:
    fill = small_disk / "fill.bin"
    try:
        with open(fill, "wb") as fh:
            while True:
                fh.write(b"x" * 65536)
    except OSError:
        pass
    recipe = tmp_path / "r.yaml"
    recipe.write_text("schema_version: 1\nticket: full\ntrials: 2\n")
    capsys.readouterr()
    code = main(["sweep", "run", "--recipe", str(recipe), "--output", str(small_disk / "out"),
                 "--", "true"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "no space left on device" in err, err
    run = small_disk / "out" / "full"
    assert not (run / ".aorta.lock").exists()
    assert not [p for p in run.rglob("*") if p.is_file() and p.stat().st_size == 0]
