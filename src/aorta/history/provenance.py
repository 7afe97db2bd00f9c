"""Which commit of the workload a run measured, asked of `git` when the run is recorded. Where
the repository is looked for, and what marks a commit dirty: docs/history.md, "The commit".
"""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

_GIT_TIMEOUT_S = 20


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
