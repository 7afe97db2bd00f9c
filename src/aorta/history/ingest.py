"""Reading a run directory into what the history records: the only module of `aorta.history`
that reads runs (through `aorta.store`). Only passing, non-baseline trials give numbers, and a
collector's figures only when its capture is `ok`: a partial capture would read as a speed-up.
Which commit of the workload a run measured is asked of `git`; where the repository is looked
for, and what marks a commit dirty: docs/history.md, "The commit".
"""

from __future__ import annotations

import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from aorta.base.errors import UserError
from aorta.report.header import env_gpus
from aorta.store.layout import ENV, RECIPE
from aorta.store.records import RunRecord
from aorta.store.run_dir import RunStore, Slot

_GIT_TIMEOUT_S = 20


@dataclass(frozen=True)
class CellData:
    """One cell of a run: its passing trials' numbers, one row per trial and metric: `samples`
    (metric, trial, value) and `kernels` (table, kernel, trial, total_ms, calls)."""

    name: str
    passed: int
    total: int
    samples: tuple[tuple[str, int, float], ...]
    kernels: tuple[tuple[str, str, int, float, int | None], ...]


@dataclass(frozen=True)
class RunSnapshot:
    path: Path
    run: RunRecord
    created_at: str                 # run.json's created_at, else its started_at
    collect: Mapping[str, Any]      # collector -> resolved options (recipe.resolved.yaml)
    host: str
    gpu: str
    cells: tuple[CellData, ...]
    cwd: Path | None
    recipe_path: Path | None        # as run.json recorded it, a relative one taken from `cwd`


def read_run(run_dir: Path) -> RunSnapshot:
    """Read `run_dir`. Raises UserError when it is not a run directory."""
    store = RunStore(run_dir)
    run = store.read_run("record")
    env = store.read_json(ENV)
    env = env if isinstance(env, dict) else {}
    by_cell: dict[str, list[Slot]] = {name: [] for name in run.cells}
    for slot in store.slots(run):
        if not slot.baseline:
            by_cell[slot.cell].append(slot)
    created = run.created_at or run.started_at
    if created is None:
        raise UserError(f"{run_dir / 'run.json'}: no created_at time; cannot place the run in "
                        f"a history")
    host: dict[str, Any] = env["host"] if isinstance(env.get("host"), dict) else {}
    cwd = Path(run.cwd) if run.cwd else None
    return RunSnapshot(
        path=run_dir.resolve(), run=run, created_at=created, collect=_collect(store, run),
        host=str(host.get("hostname") or "unknown"), gpu=gpu_text(env),
        cells=tuple(_cell(name, slots) for name, slots in by_cell.items()), cwd=cwd,
        recipe_path=(cwd or Path()) / run.recipe if run.recipe else None)


def gpu_text(env: Mapping[str, Any]) -> str:
    """The GPUs env.json saw, as one key: `NVIDIA H200`, `8x AMD Instinct MI300X`, `none`."""
    if not env:
        return "unknown"
    counts = Counter(g.name for g in env_gpus(env)[0])
    return " + ".join(n if c == 1 else f"{c}x {n}" for n, c in counts.items()) or "none"


def _collect(store: RunStore, run: RunRecord) -> dict[str, Any]:
    """Each collector's resolved options; a collector without a readable block gets None."""
    from aorta.recipe.schema import load_recipe

    path = store.path(RECIPE)
    try:
        collect = load_recipe(path).recipe.collect if path.is_file() else {}
    except UserError:
        collect = {}
    return {name: collect.get(name) for name in run.collectors}


def _cell(name: str, slots: Sequence[Slot]) -> CellData:
    passing = [s.result for s in slots if s.result is not None and s.result.verdict == "pass"]
    metrics: dict[str, list[tuple[str, int, float]]] = {}     # rows by metric, trials in order
    kernels: dict[tuple[str, str], list[tuple[str, str, int, float, int | None]]] = {}
    for trial in passing:
        for key, value in trial.numeric_metrics().items():
            metrics.setdefault(key, []).append((key, trial.index, value))
        for table, entries in trial.kernel_tables().items():
            for kernel, entry in entries.items():
                kernels.setdefault((table, kernel), []).append(
                    (table, kernel, trial.index, entry.total_ms, entry.calls))
    return CellData(name, len(passing), len(slots), tuple(chain(*metrics.values())),
                    tuple(chain(*kernels.values())))


@dataclass(frozen=True)
class Commit:
    sha: str
    time: str | None          # committer date, ISO 8601
    dirty: bool | None
    source: str               # command | cwd | recipe | given
    repo: str | None          # the origin remote, credentials removed


def candidate_dirs(command: Sequence[str], cwd: Path | None,
                   recipe: Path | None) -> list[tuple[str, Path]]:
    """(source, folder) pairs to try, in order; `recipe` is already resolved against `cwd`.
    `python3 bench/matmul.py` is measured at bench/'s checkout wherever the sweep started."""
    script = _script(command, cwd)
    found = [("command", script.parent if script else None), ("cwd", cwd),
             ("recipe", recipe.parent if recipe else None)]
    return [(source, folder) for source, folder in found if folder is not None]


def _script(command: Sequence[str], cwd: Path | None) -> Path | None:
    for position, word in enumerate(command):
        if word.startswith("-") or (position == 0 and "/" not in word):
            continue          # an option, or an interpreter or launcher found on PATH
        path = (cwd or Path()) / word
        try:
            if path.is_file():
                return path.resolve()
        except OSError:
            continue
    return None


def find_commit(candidates: Sequence[tuple[str, Path]]) -> Commit | None:
    """The commit checked out in the first candidate inside a git work tree; None without one
    (or without git)."""
    for source, folder in candidates:
        sha = _git(folder, "rev-parse", "--verify", "HEAD")
        if sha is None:
            continue
        status = _git(folder, "status", "--porcelain", "--untracked-files=no")
        return Commit(sha=sha, time=_git(folder, "show", "-s", "--format=%cI", "HEAD"),
                      dirty=None if status is None else bool(status), source=source,
                      repo=clean_remote(_git(folder, "remote", "get-url", "origin")))
    return None


def clean_remote(url: str | None) -> str | None:
    """A remote URL without user name or password (`https://token@host/x` -> `https://host/x`)."""
    if not url:
        return None
    if "://" in url:
        parts = urlsplit(url)
        netloc = (parts.hostname or "") + (f":{parts.port}" if parts.port else "")
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    if "@" in url.split(":", 1)[0]:          # scp-like: git@host:org/repo.git
        return url.split("@", 1)[1]
    return url


def _git(folder: Path, *args: str) -> str | None:
    try:
        proc = subprocess.run(["git", "-C", str(folder), *args], capture_output=True,
                              text=True, timeout=_GIT_TIMEOUT_S, check=False,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def repo_relative(path: Path) -> str | None:
    """`path` relative to the top of the git work tree holding it, or None outside one."""
    top = _git(path.parent, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    try:
        return path.resolve().relative_to(Path(top).resolve()).as_posix()
    except ValueError:
        return None
