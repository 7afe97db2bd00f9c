"""`which`: `shutil.which` without importing shutil (and the archive modules it loads), for
the commands that must start quickly (`aorta env`, `aorta collectors`)."""

from __future__ import annotations

import os

__all__ = ["which"]


def which(cmd: str, path: str | None = None) -> str | None:
    """`shutil.which(cmd, path=path)`: the first executable `cmd` on `path` (default: $PATH)."""
    if os.name != "posix":
        import shutil

        return shutil.which(cmd, path=path)
    if os.path.dirname(cmd):
        return cmd if _executable(cmd) else None
    if path is None:
        path = os.environ.get("PATH", None)
        if path is None:
            try:
                path = os.confstr("CS_PATH")
            except (AttributeError, ValueError):
                path = os.defpath
    if not path:
        return None
    seen: set[str] = set()
    for folder in os.fsdecode(path).split(os.pathsep):
        if folder not in seen:
            seen.add(folder)
            name = os.path.join(folder, cmd)
            if _executable(name):
                return name
    return None


def _executable(name: str) -> bool:
    return os.path.exists(name) and os.access(name, os.F_OK | os.X_OK) and not os.path.isdir(name)
