"""What a profiler left in its artifact directory, listed without following a link: a collector
reads only the directory the run created and the regular files in it, never what a link (left by
the payload or by anyone else) points to."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ArtifactDir:
    """`files`: the regular files under the directory, sorted; `odd`: the links and special
    files met there (paths relative to it), not read; `problem`: why the directory itself
    cannot be read; `exists` False when there is nothing at its path."""

    files: tuple[Path, ...] = ()
    odd: tuple[str, ...] = ()
    problem: str = ""
    exists: bool = True


def list_artifact_dir(root: Path) -> ArtifactDir:
    """The files under `root` (see `ArtifactDir`). Never raises for the directory's state."""
    try:
        if root.is_symlink():
            return ArtifactDir(problem=f"the artifact dir {root} is a symbolic link; aorta reads "
                                       f"only the directory it created, never one a link "
                                       f"points to")
        if not root.exists():
            return ArtifactDir(exists=False)
        if not root.is_dir():
            return ArtifactDir(problem=f"the artifact dir {root} is not a directory")
    except OSError as exc:      # e.g. a parent directory that cannot be searched
        return ArtifactDir(problem=f"cannot inspect the artifact dir: {exc}")
    files: list[Path] = []
    odd: list[str] = []
    errors: list[OSError] = []
    for folder, dirs, names in os.walk(root, onerror=errors.append, followlinks=False):
        for name in dirs + names:
            path = Path(folder, name)
            try:
                mode = path.lstat().st_mode
            except OSError:     # gone since it was listed
                continue
            if stat.S_ISREG(mode):
                files.append(path)
            elif not stat.S_ISDIR(mode):
                odd.append(str(path.relative_to(root)))
    problem = f"cannot list the artifact dir: {errors[0]}" if errors else ""
    return ArtifactDir(tuple(sorted(files)), tuple(sorted(odd)), problem)
