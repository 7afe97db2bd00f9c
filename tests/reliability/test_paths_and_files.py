"""Issue 11: nothing is written outside --output (names, symbolic links), records honour the
umask, logs are capped, and a collector's exception becomes that trial's `unparsed` capture."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from aorta.cli import main
from aorta.collectors import registry
from aorta_testing import install_plugin


def _sweep(tmp_path: Path, recipe: str, *command: str, name: str = "r.yaml",
           extra: tuple[str, ...] = ()) -> int:
    (tmp_path / name).write_text(recipe)
    return main(["sweep", "run", *extra, "--recipe", str(tmp_path / name), "--output",
                 str(tmp_path / "out"), "--", *(command or ("true",))])


def _listing(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("where", ["run", "cells", "cell", "trial"])
def test_a_symlink_in_the_run_directory_is_never_followed(tmp_path: Path, where: str,
                                                          capsys: pytest.CaptureFixture[str]
                                                          ) -> None:
    recipe = "schema_version: 1\nticket: t\ntrials: 2\n"
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious.txt").write_text("keep me")
    if where != "run":
        assert _sweep(tmp_path, recipe) == 0
    link = {"run": "out/t", "cells": "out/t/cells", "cell": "out/t/cells/default",
            "trial": "out/t/cells/default/trial_1"}[where]
    target = tmp_path / link
    if target.exists():
        import shutil

        shutil.rmtree(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.symlink_to(outside)
    for extra in ((), ("--fresh",)):
        capsys.readouterr()
        code = _sweep(tmp_path, recipe, extra=extra)
        err = capsys.readouterr().err
        assert code in (0, 2), err
        assert "Traceback" not in err
        if code == 2:
            assert "symbolic link" in err and err.count("\n") == 1, err
        assert _listing(outside) == {"precious.txt": b"keep me"}, (where, extra)


def test_names_from_recipe_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = "schema_version: 1\n"
    for name in ("...yaml", "..yaml", "-x.yaml"):
        capsys.readouterr()
        assert _sweep(tmp_path, recipe, name=name) == 2
        assert "add 'ticket: NAME'" in capsys.readouterr().err
    long = "s" * 240 + ".yaml"
    assert _sweep(tmp_path, recipe, name=long) == 0
    [run] = (tmp_path / "out").iterdir()
    assert len(run.name.encode()) <= 100 and run.name.startswith("sss")
    assert _sweep(tmp_path, recipe, name=long) == 0      # the same short name: resumed
    assert len(list((tmp_path / "out").iterdir())) == 1
    assert sorted(os.listdir(tmp_path)) == sorted(["out", "...yaml", "..yaml", "-x.yaml", long])


def test_long_cell_names_are_shortened_stably(tmp_path: Path) -> None:
    variants = "\n".join(f"  a{i}: {{{'v' * 60}{i}: {{}}}}" for i in range(4))
    assert _sweep(tmp_path, f"schema_version: 1\nticket: c\naxes:\n{variants}\n") == 0
    [cell] = (tmp_path / "out/c/cells").iterdir()
    assert len(cell.name.encode()) <= 100
    assert json.loads((tmp_path / "out/c/run.json").read_text())["cells"] == [cell.name]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_records_honour_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    old = os.umask(umask)
    try:
        assert _sweep(tmp_path, "schema_version: 1\nticket: u\n", extra=("--report",)) == 0
    finally:
        os.umask(old)
    run = tmp_path / "out/u"
    for name in ("run.json", "matrix.json", "perf.md", "report.html",
                 "cells/default/trial_0/result.json", "cells/default/trial_0/stdout.log"):
        assert stat.S_IMODE((run / name).stat().st_mode) == mode, name
    assert stat.S_IMODE((run / "cells/default/trial_0/rerun.sh").stat().st_mode) == \
        0o777 & ~umask


def test_logs_are_capped_head_and_tail(tmp_path: Path) -> None:
    code = ("import sys\nsys.stdout.write('HEAD\\n' + 'x' * (3 << 20) + '\\nTAIL\\n')\n"
            "sys.stderr.write('e' * 100)\n")
    (tmp_path / "p.py").write_text(code)
    assert _sweep(tmp_path, "schema_version: 1\nticket: l\nmax_log_mib: 1\n",
                  sys.executable, str(tmp_path / "p.py")) == 0
    trial = tmp_path / "out/l/cells/default/trial_0"
    log = (trial / "stdout.log").read_bytes()
    assert log.startswith(b"HEAD\n") and log.endswith(b"\nTAIL\n")
    assert (1 << 20) <= len(log) <= (1 << 20) + 200
    assert b"bytes of output cut here" in log
    result = json.loads((trial / "result.json").read_text())
    assert result["logs"]["stdout"] == {"written": (3 << 20) + 11, "kept": 1 << 20,
                                        "problem": None}
    assert result["logs"]["stderr"]["written"] == result["logs"]["stderr"]["kept"] == 100
    assert any("stdout.log keeps" in w for w in result["warnings"])


BOOM = '''
from aorta.collectors.base import Capability, Collector, CollectorOptions


class BoomOptions(CollectorOptions):
    pass


class BoomCollector(Collector):
    name = "boom"
    wrap_rank = 99
    options_model = BoomOptions

    def wrap(self, launch, out_dir, options, ctx):
        return launch

    def summarize(self, out_dir, options, outcome):
        raise ZeroDivisionError("the parser divided by zero")

    def probe(self):
        return Capability("boom", True)
'''


def test_a_collector_that_raises_leaves_an_unparsed_capture(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = install_plugin(tmp_path / "site", "boom_collector", BOOM,
                          {"boom": "boom_collector:BoomCollector"})
    monkeypatch.syspath_prepend(str(site))
    registry.get.cache_clear()
    registry._table.cache_clear()
    try:
        assert _sweep(tmp_path, "schema_version: 1\nticket: b\ntrials: 2\ncollect: [boom]\n") == 0
    finally:
        registry.get.cache_clear()
        registry._table.cache_clear()
    for i in range(2):
        result: dict[str, Any] = json.loads(
            (tmp_path / f"out/b/cells/default/trial_{i}/result.json").read_text())
        assert result["verdict"] == "pass"
        capture = result["captures"]["boom"]
        assert capture["state"] == "unparsed"
        assert "ZeroDivisionError: the parser divided by zero" in capture["reason"]
