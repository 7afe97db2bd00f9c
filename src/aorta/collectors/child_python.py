"""Which interpreter will import what a collector's launcher needs, and can it?

`python3 train.py` runs whatever `python3` the trial's PATH finds first, not aorta's own
interpreter. `command_python` resolves it as the child will (a `pytest` script by its shebang);
`check_imports` asks it (`python -c "import torch"`, no shell, a timeout, the given environment)
for `aorta doctor` and the preflight, several at once: each is a whole interpreter start.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from aorta.base.errors import SetupError
from aorta.base.tools import run_tool
from aorta.collectors.python_launch import split_python_launch

#: Without a command, the interpreters a `-- python3 script.py` (or `python`) command would run.
DEFAULT_PYTHONS = ("python3", "python")
IMPORT_TIMEOUT_S = 30.0     # importing torch takes seconds on a slow disk, not minutes


def command_python(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The interpreter that runs `argv` (a Python launch), resolved on `env`'s PATH; None
    when `argv` is not a Python launch (a collector's own check refuses those)."""
    try:
        python = split_python_launch(tuple(argv), "check", "").python
    except SetupError:
        return None
    return python if os.sep in python else shutil.which(python, path=env.get("PATH", os.defpath))


@dataclass(frozen=True)
class ChildImport:
    """What `python` answered to `import <module>`: ok True or False (`problem`: its last line
    of stderr), or None when the check could not finish (`problem` says why)."""

    python: str
    module: str
    ok: bool | None
    problem: str = ""


_cache: dict[tuple[str, str, tuple[tuple[str, str], ...]], ChildImport] = {}


def check_import(python: str, module: str, env: Mapping[str, str],
                 timeout: float = IMPORT_TIMEOUT_S) -> ChildImport:
    """Run `python -c "import <module>"` in `env`; cached per interpreter, module and
    environment for the life of this process (any variable can change what imports: PATH,
    VIRTUAL_ENV, LD_LIBRARY_PATH, PYTHONHOME, ...)."""
    key = (python, module, tuple(sorted(env.items())))
    if key not in _cache:
        if not module.replace(".", "").replace("_", "").isalnum():
            raise ValueError(f"not a module name: {module!r}")
        result = run_tool([python, "-c", f"import {module}"], timeout, env=env, merge_stderr=False)
        if result.returncode is None:
            found = ChildImport(python, module, None, result.problem)
        elif result.ok:
            found = ChildImport(python, module, True)
        else:
            lines = [line.strip() for line in result.errors.splitlines() if line.strip()]
            found = ChildImport(python, module, False, lines[-1][:300] if lines else
                                f"exit status {result.returncode}")
        _cache[key] = found
    return _cache[key]


def check_imports(checks: Sequence[tuple[str, str]], env: Mapping[str, str],
                  timeout: float = IMPORT_TIMEOUT_S) -> dict[tuple[str, str], ChildImport]:
    """`check_import` of every (python, module) in `checks`, all at once."""
    if not (todo := list(dict.fromkeys(checks))):
        return {}
    with ThreadPoolExecutor(max_workers=min(8, len(todo))) as pool:
        found = pool.map(lambda check: check_import(check[0], check[1], env, timeout), todo)
        return dict(zip(todo, found))
