"""Issue 11: every bad recipe gets one line on stderr and exit 2, before any trial, quickly;
no traceback, no hang, nothing written outside --output. Over 500 generated cases."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from aorta.cli import main
from hostile_recipes import generated

CASES = list(generated())
# A generous bound for a loaded 2-core CI machine; docs/reliability.md gives the measured
# figures (the slowest case takes a fraction of a second).
BOUND_S = 5.0


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.mark.parametrize("label, name, data", CASES, ids=[c[0] for c in CASES])
def test_hostile_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str], label: str,
                        name: str, data: bytes) -> None:
    work = tmp_path / "work"
    work.mkdir()
    recipe = work / name
    recipe.write_bytes(data)
    before = _tree(tmp_path)
    start = time.monotonic()
    code = main(["sweep", "run", "--dry-run", "--recipe", str(recipe),
                 "--output", str(work / "out"), "--", "true"])
    elapsed = time.monotonic() - start
    err = capsys.readouterr().err
    assert code in (0, 2), err
    assert "Traceback" not in err and "internal error" not in err, err
    if code == 2:
        assert err.startswith("aorta: error: ") and err.count("\n") == 1, err
    assert elapsed < BOUND_S, f"{label} took {elapsed:.1f} s"
    assert _tree(tmp_path) == before     # a dry run writes nothing, anywhere


def test_the_suite_is_large_enough() -> None:
    assert len(CASES) >= 300


@pytest.mark.parametrize("label", ["text:alias-bomb", "text:deep-2000", "text:int-5000",
                                   "file:three-dots", "name:ticket=newline",
                                   "text:cells-2^40", "timeout_per_trial=inf"])
def test_the_cases_the_issue_names_are_refused(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str],
                                               label: str) -> None:
    [(_, name, data)] = [c for c in CASES if c[0] == label]
    (tmp_path / name).write_bytes(data)
    out = tmp_path / "out"
    code = main(["sweep", "run", "--recipe", str(tmp_path / name), "--output", str(out),
                 "--", "true"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert not out.exists() or not any(out.rglob("result.json"))
    assert os.listdir(tmp_path) == [name] or set(os.listdir(tmp_path)) <= {name, "out"}
