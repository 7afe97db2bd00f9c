"""Reading a `python script.py ...` or `pytest ...` launch, for collectors that take over a script.

Accepted shapes (anything else raises the caller's `SetupError` subclass, naming `escape`):

    python [-u -B -E -s -S -O -OO -I -b -q ...] script.py [args]
    python [safe flags] -m pytest [args]          (also -mpytest)
    pytest [args]                                  (its interpreter read from the shebang)

`python` is any basename matching `python`, `python3` or `python3.12`.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from aorta.base.errors import SetupError

SAFE_FLAGS = frozenset({"-u", "-B", "-E", "-s", "-S", "-O", "-OO", "-I", "-b", "-q"})
_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?$")


@dataclass(frozen=True)
class PythonLaunch:
    """`python` `flags` then either a script (`script`, `args`) or pytest (`args` only)."""

    python: str
    flags: tuple[str, ...]
    script: str | None          # None: the target is pytest
    args: tuple[str, ...]

    def through(self, module: str, options: Sequence[str],
                python: str | None = None) -> tuple[str, ...]:
        """This launch run by aorta's launcher `module`, by `python` when given:
        `python [flags] -m module [options] [--pytest] -- <script and args, or pytest's args>`."""
        target = ("--pytest", "--") if self.script is None else ("--", self.script or "")
        return (python or self.python, *self.flags, "-m", module, *options, *target, *self.args)


def is_python(arg0: str) -> bool:
    return bool(_PYTHON_NAME.match(Path(arg0).name))


def split_python_launch(argv: tuple[str, ...] | list[str], collector: str, escape: str,
                        error: type[SetupError] = SetupError) -> PythonLaunch:
    """Split `argv` or raise `error` with a message that ends with `escape` (what to do)."""

    def fail(problem: str) -> SetupError:
        return error(f"{collector}: {problem}; {escape}")

    if not argv:
        raise fail("the command is empty")
    arg0 = argv[0]
    if Path(arg0).name == "pytest":
        return PythonLaunch(pytest_python(arg0), (), None, tuple(argv[1:]))
    if not is_python(arg0):
        raise fail(f"needs a Python script launch (python script.py, pytest, python -m pytest), "
                   f"got {arg0!r}")
    flags: list[str] = []
    rest = list(argv[1:])
    while rest and rest[0].startswith("-"):
        flag = rest.pop(0)
        if flag in SAFE_FLAGS:
            flags.append(flag)
        elif flag in ("-m", "-mpytest"):
            module = "pytest" if flag == "-mpytest" else (rest.pop(0) if rest else "")
            if not module:
                raise fail("'python -m' has no module name")
            if module != "pytest":
                raise fail(f"cannot wrap 'python -m {module}' (only scripts and pytest can be "
                           f"taken over)")
            return PythonLaunch(arg0, tuple(flags), None, tuple(rest))
        else:
            raise fail(f"cannot wrap the interpreter option {flag!r} (only {' '.join(sorted(SAFE_FLAGS))} "
                       f"are kept)")
    if not rest:
        raise fail("needs a script path after the interpreter")
    return PythonLaunch(arg0, tuple(flags), rest[0], tuple(rest[1:]))


def pytest_python(pytest: str) -> str:
    """The interpreter a `pytest` console script runs under: its shebang, else ours."""
    if path := shutil.which(pytest):
        try:
            with open(path, "rb") as fh:
                first = fh.readline(256).decode("utf-8", "replace").strip()
        except OSError:
            first = ""
        if first.startswith("#!"):
            parts = first[2:].split()
            if parts and Path(parts[0]).name == "env" and len(parts) > 1:
                parts = parts[1:]
            if parts and is_python(parts[0]):
                return parts[0]
    return sys.executable
