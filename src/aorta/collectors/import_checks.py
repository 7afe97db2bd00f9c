"""Can an interpreter import a module? `[python, -c, "import torch"]`, run for `aorta doctor`
and the sweep's preflight (`aorta.collectors.child_python` finds which interpreter to ask).

Never through a shell, with a timeout, in the environment given (the child's: a recipe's
PYTHONPATH counts). Checks asked for together run at once, each in a session of its own
that is killed whole when it overruns or the caller is interrupted. In aorta's own
environment a check `aorta doctor` started early (`spawn_import_check` in an `EarlyTools`
block) is waited for, not started again. Light: `aorta doctor` imports it before anything
else, so it loads neither subprocess nor dataclasses.
"""

from __future__ import annotations

import os
import time

from aorta.early_tools import EarlyTools
from aorta.tool_pipe import PipedTool, ToolOverflow, ToolTimeout, start_on_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

__all__ = ["ChildImport", "check_import", "check_imports", "IMPORT_TIMEOUT_S",
           "import_check_argv", "spawn_import_check"]

IMPORT_TIMEOUT_S = 30.0     # importing torch takes seconds on a slow disk, not minutes


class ChildImport:
    """What `python` answered to `import <module>`: ok True or False (`problem`: its last line
    of stderr), or None when the check could not finish (`problem` says why)."""

    __slots__ = ("python", "module", "ok", "problem")

    def __init__(self, python: str, module: str, ok: bool | None, problem: str = "") -> None:
        self.python = python            # the interpreter, as found on the child's PATH
        self.module = module
        self.ok = ok
        self.problem = problem

    def __repr__(self) -> str:
        return (f"ChildImport(python={self.python!r}, module={self.module!r}, ok={self.ok!r}, "
                f"problem={self.problem!r})")


_cache: dict[tuple[str, str, tuple[tuple[str, str], ...]], ChildImport] = {}


def check_import(python: str, module: str, env: Mapping[str, str],
                 timeout: float = IMPORT_TIMEOUT_S) -> ChildImport:
    """Run `python -c "import <module>"` in `env`; cached per interpreter, module and
    environment for the life of this process (any variable can change what imports: PATH,
    VIRTUAL_ENV, LD_LIBRARY_PATH, PYTHONHOME, ...)."""
    return check_imports([(python, module)], env, timeout)[python, module]


def check_imports(checks: Sequence[tuple[str, str]], env: Mapping[str, str],
                  timeout: float = IMPORT_TIMEOUT_S) -> dict[tuple[str, str], ChildImport]:
    """`check_import` of every (python, module) in `checks`, all at once: each is a whole
    interpreter start (a tenth of a second and more through a version manager's shims), and
    they wait on nothing of each other's. Each has `timeout` seconds from now."""
    todo = list(dict.fromkeys(checks))
    for _, module in todo:
        if not module.replace(".", "").replace("_", "").isalnum():
            raise ValueError(f"not a module name: {module!r}")
    frozen_env = tuple(sorted(env.items()))
    started: dict[tuple[str, str], PipedTool] = {}
    try:
        for python, module in todo:
            if (python, module, frozen_env) in _cache:
                continue
            try:
                started[python, module] = _start(python, module, env)
            except OSError as exc:
                _cache[python, module, frozen_env] = ChildImport(
                    python, module, None, f"cannot run {python}: {exc.strerror or exc}")
        deadline = time.monotonic() + timeout
        for (python, module), proc in started.items():
            _cache[python, module, frozen_env] = _finish(
                proc, python, module, max(0.0, deadline - time.monotonic()), timeout)
    finally:                 # overran, or interrupted: nothing outlives the call
        for proc in started.values():
            if proc.returncode is None:
                proc.stop()
    return {(python, module): _cache[python, module, frozen_env] for python, module in todo}


def import_check_argv(python: str, module: str) -> list[str]:
    return [python, "-c", f"import {module}"]


def spawn_import_check(argv: Sequence[str]) -> PipedTool:
    """One import check in aorta's own environment (what `aorta doctor` checks); a bare
    interpreter name is looked up on PATH as exec does, never in the working directory."""
    return start_on_path(argv)


def _start(python: str, module: str, env: Mapping[str, str]) -> PipedTool:
    argv = import_check_argv(python, module)
    early = EarlyTools.take(spawn_import_check, argv) if env is os.environ else None
    return early or start_on_path(argv, env)


def _finish(proc: PipedTool, python: str, module: str, wait_s: float,
            timeout: float) -> ChildImport:
    try:
        _, err = proc.communicate(timeout=wait_s)
    except ToolTimeout:
        return ChildImport(python, module, None, f"importing {module} took over {timeout:g} s")
    except ToolOverflow as exc:      # killed with the others still running, below
        return ChildImport(python, module, None, str(exc))
    if proc.returncode == 0:
        return ChildImport(python, module, True)
    lines = [line.strip() for line in err.decode("utf-8", "replace").splitlines()
             if line.strip()]
    return ChildImport(python, module, False,
                       lines[-1][:300] if lines else f"exit status {proc.returncode}")
