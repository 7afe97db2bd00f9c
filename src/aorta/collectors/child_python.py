"""Can the payload's own interpreter import what a collector's launcher needs?

`aorta doctor` and the sweep's preflight used to ask aorta's interpreter, while a command like
`python3 train.py` runs whatever `python3` the trial's PATH finds first. This module resolves
that interpreter the way the child will (`python3` on the child's PATH; a `pytest` script's
shebang) and runs it, `[python, -c, "import torch"]`, never through a shell and with a short
timeout, in the child's environment (so a recipe's PYTHONPATH counts).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from aorta.collectors.python_launch import split_python_launch
from aorta.errors import SetupError

__all__ = ["ChildImport", "command_python", "check_import", "check_imports", "IMPORT_TIMEOUT_S"]

IMPORT_TIMEOUT_S = 30.0     # importing torch takes seconds on a slow disk, not minutes


@dataclass(frozen=True)
class ChildImport:
    python: str              # the interpreter, as found on the child's PATH
    module: str
    ok: bool | None          # None: the check itself could not finish (timeout, no such file)
    problem: str = ""        # the interpreter's last line of stderr, or why it could not run


def command_python(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The interpreter that runs `argv` (a Python launch), resolved on `env`'s PATH; None
    when `argv` is not a Python launch (a collector's own check refuses those)."""
    try:
        launch = split_python_launch(tuple(argv), "check", "")
    except SetupError:
        return None
    python = launch.python
    if os.sep in python:
        return python
    return shutil.which(python, path=env.get("PATH", os.defpath))


_cache: dict[tuple[str, str, tuple[tuple[str, str], ...]], ChildImport] = {}


def check_import(python: str, module: str, env: Mapping[str, str],
                 timeout: float = IMPORT_TIMEOUT_S) -> ChildImport:
    """Run `python -c "import <module>"` in `env`; cached per interpreter, module and
    environment for the life of this process (any variable can change what imports: PATH,
    VIRTUAL_ENV, LD_LIBRARY_PATH, PYTHONHOME, ...)."""
    if not module.replace(".", "").replace("_", "").isalnum():
        raise ValueError(f"not a module name: {module!r}")
    key = (python, module, tuple(sorted(env.items())))
    if key not in _cache:
        _cache[key] = _run(python, module, env, timeout)
    return _cache[key]


def check_imports(checks: Sequence[tuple[str, str]], env: Mapping[str, str],
                  timeout: float = IMPORT_TIMEOUT_S) -> dict[tuple[str, str], ChildImport]:
    """`check_import` of every (python, module) in `checks`, all at once: each is a whole
    interpreter start (a tenth of a second and more through a version manager's shims), and
    they wait on nothing of each other's."""
    todo = list(dict.fromkeys(checks))
    if len(todo) < 2:
        return {(p, m): check_import(p, m, env, timeout) for p, m in todo}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(todo), 8)) as pool:
        found = list(pool.map(lambda c: check_import(c[0], c[1], env, timeout), todo))
    return dict(zip(todo, found))


def _run(python: str, module: str, env: Mapping[str, str], timeout: float) -> ChildImport:
    try:
        proc = subprocess.run([python, "-c", f"import {module}"], env=dict(env),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              errors="replace", timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return ChildImport(python, module, None, f"importing {module} took over {timeout:g} s")
    except OSError as exc:
        return ChildImport(python, module, None, f"cannot run {python}: {exc.strerror or exc}")
    if proc.returncode == 0:
        return ChildImport(python, module, True)
    lines = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
    return ChildImport(python, module, False,
                       lines[-1][:300] if lines else f"exit status {proc.returncode}")
