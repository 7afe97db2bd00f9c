"""Finding programs and modules for the commands that must start quickly (`aorta env`,
`aorta collectors`): `which` is `shutil.which` without importing shutil (and the archive
modules it loads); `module_spec` is `importlib.util.find_spec` for a top-level module without
importing importlib.util (and contextlib, collections and functools with it)."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec

__all__ = ["which", "which_all", "module_spec"]


def module_spec(name: str) -> ModuleSpec | None:
    """`importlib.util.find_spec(name)` for a top-level `name`: the loaded module's spec
    (ValueError when it has none), else the first finder on `sys.meta_path` that knows it
    (editable installs' finders included), else None. Nothing is imported."""
    if "." in name:
        raise ValueError(f"{name!r} is not a top-level module name")
    if name in sys.modules:
        spec = getattr(sys.modules[name], "__spec__", None)
        if spec is None:
            raise ValueError(f"{name}.__spec__ is None")
        return spec  # type: ignore[no-any-return]
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, None) if find is not None else None
        if spec is not None:
            return spec  # type: ignore[no-any-return]
    return None


def which(cmd: str, path: str | None = None) -> str | None:
    """`shutil.which(cmd, path=path)`: the first executable `cmd` on `path` (default: $PATH)."""
    if os.name != "posix":
        import shutil

        return shutil.which(cmd, path=path)
    return next(iter(which_all(cmd, path)), None)


def which_all(cmd: str, path: str | None = None) -> list[str]:
    """Every executable `cmd` on `path` (default: $PATH), in order: where exec'ing the first
    fails, exec's own search goes on to the next."""
    if os.path.dirname(cmd):
        return [cmd] if _executable(cmd) else []
    if path is None:
        path = os.environ.get("PATH", None)
        if path is None:
            try:
                path = os.confstr("CS_PATH")
            except (AttributeError, ValueError):
                path = os.defpath
    if not path:
        return []
    found: list[str] = []
    for folder in dict.fromkeys(os.fsdecode(path).split(os.pathsep)):
        name = os.path.join(folder, cmd)
        if _executable(name):
            found.append(name)
    return found


def _executable(name: str) -> bool:
    return os.path.exists(name) and os.access(name, os.F_OK | os.X_OK) and not os.path.isdir(name)
