"""Which interpreter will import what a collector's launcher needs?

`aorta doctor` and the sweep's preflight used to ask aorta's interpreter, while a command like
`python3 train.py` runs whatever `python3` the trial's PATH finds first. This module resolves
that interpreter the way the child will (`python3` on the child's PATH; a `pytest` script's
shebang); `aorta.collectors.import_checks` then asks it, `[python, -c, "import torch"]`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from aorta.collectors.probes import proton_python_override
from aorta.pathsearch import which

__all__ = ["command_python", "builtin_child_python", "default_child_python", "DEFAULT_PYTHONS"]

#: Without a command, the interpreters a `-- python3 script.py` (or `python`) command would run.
DEFAULT_PYTHONS = ("python3", "python")


def command_python(argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """The interpreter that runs `argv` (a Python launch), resolved on `env`'s PATH; None
    when `argv` is not a Python launch (a collector's own check refuses those)."""
    from aorta.collectors.python_launch import split_python_launch
    from aorta.errors import SetupError

    try:
        launch = split_python_launch(tuple(argv), "check", "")
    except SetupError:
        return None
    python = launch.python
    if os.sep in python:
        return python
    return which(python, path=env.get("PATH", os.defpath))


def builtin_child_python(name: str, argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """`Collector.child_python` of the built-in collector `name`: the command's interpreter,
    except for proton where $AORTA_PROTON_PYTHON names the one that has Triton."""
    return _override(name, env) or command_python(argv, env)


def default_child_python(name: str, python: str, env: Mapping[str, str]) -> str | None:
    """`builtin_child_python(name, (python, "script.py"), env)` for a bare interpreter name
    (one of DEFAULT_PYTHONS), without parsing a command line: `aorta doctor` asks this before
    anything heavy is loaded."""
    return _override(name, env) or which(python, path=env.get("PATH", os.defpath))


def _override(name: str, env: Mapping[str, str]) -> str | None:
    return proton_python_override(env) if name == "proton" else None
