"""A third-party collector in one file, installed by pip with an entry point, works in `aorta
collectors`, `aorta doctor` and `aorta sweep run` like a built-in: the one of
docs/collectors/writing.md, taken from the page as written."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aorta_testing import REPO, trial_result

GUIDE = REPO / "docs" / "collectors" / "writing.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The guide's collector, installed by pip (no index, no build isolation) into a folder
    of its own."""
    pytest.importorskip("setuptools", minversion="70.1")
    text = GUIDE.read_text()
    module = re.search(r"run by tests/collectors/test_plugin_collector.py -->\n```python\n"
                       r"(.*?)```", text, re.S).group(1)
    pyproject = re.search(r"```toml\n(\[project\].*?)```", text, re.S).group(1)
    project = tmp_path_factory.mktemp("project")
    (project / "aorta_stopwatch.py").write_text(module)
    (project / "pyproject.toml").write_text(textwrap.dedent("""\
        [build-system]
        requires = ["setuptools>=70.1"]
        build-backend = "setuptools.build_meta"

        """) + pyproject)
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--no-build-isolation", "--target", str(target), str(project)],
                   check=True, capture_output=True, timeout=300)
    assert list(target.glob("aorta_stopwatch-1.0.dist-info"))
    return target


def _aorta(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(site), str(REPO / "src"), os.environ.get("PYTHONPATH")]))}
    return subprocess.run([sys.executable, "-m", "aorta", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300, check=False)


def test_it_is_listed_with_its_options(site: Path) -> None:
    done = _aorta(site, "collectors", "--json")
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(done.stdout)}
    assert {"cprofile", "stopwatch"} <= set(rows)
    assert (rows["stopwatch"]["usable"], rows["stopwatch"]["version"]) == (True, "1.0")
    assert rows["stopwatch"]["options"][0]["key"] == "scale"


def test_doctor_checks_it(site: Path) -> None:
    done = _aorta(site, "doctor", "--collect", "stopwatch")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(r"^ok\s+stopwatch\s+1\.0\s+needs only Python$", done.stdout, re.M)


def test_a_sweep_runs_under_it_and_records_its_figures(site: Path, tmp_path: Path) -> None:
    recipe = tmp_path / "r.yaml"
    recipe.write_text("schema_version: 1\nticket: timed\ntrials: 2\n"
                      "collect: {stopwatch: {scale: 1.0}}\n")
    done = _aorta(site, "sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path),
                  "--", sys.executable, "-c", "import time; time.sleep(0.05)")
    assert done.returncode == 0, done.stderr
    for index in range(2):
        result = trial_result(tmp_path / "timed", "default", index)
        assert result["verdict"] == "pass"
        assert result["captures"]["stopwatch"]["state"] == "ok"
        assert 0.05 <= result["metrics"]["stopwatch_wall_ms"] < 30   # scale 1.0: seconds
        assert result["argv"][:2] == [sys.executable, "-c"]
    bad = _aorta(site, "sweep", "plan", "--collect", "stopwatch", "--output", str(tmp_path),
                 "--recipe", str(recipe), "--", "true")
    assert bad.returncode == 0, bad.stderr
    recipe.write_text("schema_version: 1\ncollect: {stopwatch: {scale: 0}}\n")
    refused = _aorta(site, "sweep", "plan", "--recipe", str(recipe), "--", "true")
    assert refused.returncode == 2 and "collect.stopwatch.scale" in refused.stderr
