"""Retention: what a finished trial keeps once its collectors' metrics are read (docs/sweep.md,
`retain` levels). Pruning walks the trial directory by file descriptor and never follows a
symbolic link, so nothing outside it can be touched. Directories stay (empty)."""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path

from aorta.recipe.limits import RETAIN_LEVELS
from aorta.store.files import open_dir
from aorta.store.records import Retention

MAX_LISTED = 200   # paths listed in result.json; beyond this only the count and bytes are
_RECORD = frozenset({"result.json", ".running.json"})
_TOP_LOGS = frozenset({"stdout.log", "stderr.log", "rerun.sh", "child.env"})
_SUMMARY = re.compile(r"(?:^|[._\-])(?:summary|stats|sum)(?:[._\-]|$)", re.IGNORECASE)
_RANK = {level: rank for rank, level in enumerate(RETAIN_LEVELS)}   # none=0 .. full=3
_CLASS_RANK = {"record": 0, "log": 1, "summary": 2, "heavy": 3}


def file_class(relative: str) -> str:
    """The class of a file at `relative` (`/`-separated, inside the trial directory)."""
    parts = relative.split("/")
    name = parts[-1]
    top = len(parts) == 1
    if top and name in _RECORD:
        return "record"
    if name.endswith(".log") or (top and name in _TOP_LOGS):
        return "log"
    return "summary" if not top and _SUMMARY.search(name) else "heavy"


#: How deep pruning looks (deeper files are kept), so a deep tree exhausts no fds nor the stack.
MAX_DEPTH = 64


def prune_trial(run_root: Path, trial_parts: tuple[str, ...], level: str) -> Retention:
    """Delete the files of the trial directory `run_root/trial_parts` above `level`. A link on
    the way raises `RunDirError`; a file that vanished or cannot be removed is not recorded."""
    if level not in _RANK:
        raise ValueError(f"retain level {level!r} is not one of {RETAIN_LEVELS}")
    if level == "full":
        return Retention(level, [], 0, 0)
    files: list[str] = []
    count = size = 0
    try:
        with open_dir(run_root, trial_parts) as fd:
            for relative, dir_fd, name, nbytes in _files(fd, "", MAX_DEPTH):
                if _CLASS_RANK[file_class(relative)] <= _RANK[level]:
                    continue
                try:
                    os.unlink(name, dir_fd=dir_fd)
                except OSError:
                    continue
                count, size = count + 1, size + nbytes
                if len(files) < MAX_LISTED:
                    files.append(relative)
    except FileNotFoundError:
        pass   # the payload removed its own trial directory: nothing left to prune
    return Retention(level, files, count, size)


def _files(fd: int, prefix: str, depth: int) -> Iterator[tuple[str, int, str, int]]:
    """(relative path, directory fd, name, bytes) of every regular file below `fd`, sorted for
    a stable record; links neither followed nor returned; at most `depth` levels down."""
    with os.scandir(fd) as entries:
        names = sorted(e.name for e in entries)
    for name in names:
        try:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue
        relative = f"{prefix}{name}"
        if stat.S_ISREG(info.st_mode):
            yield relative, fd, name, info.st_size
        elif stat.S_ISDIR(info.st_mode) and depth > 0:
            try:
                child = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                                dir_fd=fd)
            except OSError:
                continue   # swapped for a link since the stat: not entered
            try:
                yield from _files(child, f"{relative}/", depth - 1)
            finally:
                os.close(child)
