"""Finding the workload's commit from what a run recorded."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from aorta.history import record_run
from aorta.history.ingest import candidate_dirs, clean_remote, find_commit
from history_helpers import series_runs

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _repo(path: Path) -> str:
    path.mkdir(parents=True)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "bench.py").write_text("print(1)\n")
    (path / "recipe.yaml").write_text("schema_version: 1\n")
    subprocess.run(["git", "-C", str(path), "add", "."], check=True)
    subprocess.run(["git", "-C", str(path), *env, "commit", "-qm", "one"], check=True)
    subprocess.run(["git", "-C", str(path), "remote", "add", "origin",
                    "https://user:tok3n@git.example/org/bench.git"], check=True)
    return subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def test_commit_of_the_script_in_the_command(tmp_path: Path) -> None:
    sha = _repo(tmp_path / "work")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    candidates = candidate_dirs(["python3", str(tmp_path / "work" / "bench.py")], elsewhere,
                                None)
    commit = find_commit(candidates)
    assert commit is not None and commit.sha == sha and commit.source == "command"
    assert commit.dirty is False and commit.repo == "https://git.example/org/bench.git"


def test_cwd_then_recipe_and_dirty(tmp_path: Path) -> None:
    sha = _repo(tmp_path / "work")
    (tmp_path / "work" / "bench.py").write_text("print(2)\n")
    commit = find_commit(candidate_dirs(["bench-binary"], tmp_path / "work", None))
    assert commit is not None and commit.source == "cwd" and commit.dirty is True
    commit = find_commit(candidate_dirs(["bench-binary"], tmp_path,
                                        tmp_path / "work" / "recipe.yaml"))
    assert commit is not None and commit.source == "recipe" and commit.sha == sha


def test_no_repository_no_commit(tmp_path: Path) -> None:
    assert find_commit(candidate_dirs(["python3", "x.py"], tmp_path, None)) is None


def test_record_finds_the_commit_from_the_runs_cwd(tmp_path: Path) -> None:
    sha = _repo(tmp_path / "work")
    (run,) = series_runs(tmp_path / "runs", [1.0], cwd=tmp_path / "work",
                         recipe="recipe.yaml")
    done = record_run(run, str(tmp_path / "h.sqlite"))
    assert done.commit == sha and done.commit_source == "command"
    assert "recipe.yaml on bench-1" in done.context     # the recipe, relative to its repo


@pytest.mark.parametrize("url, clean", [
    ("https://user:pw@host/x.git", "https://host/x.git"),
    ("git@host:org/x.git", "host:org/x.git"),
    ("ssh://git@host:2222/x", "ssh://host:2222/x"),
    ("/srv/git/x", "/srv/git/x"),
])
def test_remote_loses_its_credentials(url: str, clean: str) -> None:
    assert clean_remote(url) == clean
