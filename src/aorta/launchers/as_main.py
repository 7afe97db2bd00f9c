"""Running a script (or pytest) the way `python script.py` (or `python -m pytest`) runs it, from
inside a launcher that has work to do once the target ends (`run_then`). Guarantees:
docs/collectors/proton.md, "The session".
"""

from __future__ import annotations

import builtins
import importlib.machinery
import io
import os
import runpy
import sys
import types

# This module runs in the payload's process before cProfile starts: a module imported here
# (typing imports re, argparse gettext and locale) would be missing from the payload's
# profile when the payload imports it. So names for annotations only are imported for the
# type checker alone (`typing.TYPE_CHECKING` would import typing).
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from types import TracebackType
    from typing import Any


def script_problem(path: str) -> str | None:
    """Why `python path` could not run `path` (as its "can't open file" says), else None."""
    full = os.path.abspath(path)
    if not os.path.exists(full):
        return f"can't open file {full!r}: no such file"
    if not os.path.isfile(full):
        return f"{full!r} is not a Python source file (directories and zip apps are not run)"
    return None


def run_as_main(target: list[str], pytest: bool, code_name: str | None = None) -> None:
    """Run `target` as the program's `__main__`; let whatever ends it escape. `code_name`:
    the file name its code carries (default: the absolute path, as `python script.py`)."""
    if pytest:
        sys.argv = ["pytest", *target]
        runpy.run_module("pytest", run_name="__main__", alter_sys=True)
        return
    # Not runpy.run_path: it sets argv[0] to the path it runs, and `python script.py` keeps
    # argv[0] as typed while `__file__` is absolute (Python 3.9+).
    script = os.path.abspath(target[0])
    with io.open_code(script) as fh:
        source = fh.read()
    # dont_inherit: the launcher's `from __future__ import annotations` must not leak in.
    code = compile(source, code_name or script, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    module.__dict__.update(__file__=script, __builtins__=builtins, __cached__=None,
                           __loader__=importlib.machinery.SourceFileLoader("__main__", script))
    sys.argv = list(target)
    if not (sys.flags.isolated or getattr(sys.flags, "safe_path", False)):
        # `python -m launcher` put the working directory first; `python script.py` puts the
        # directory of the script's real path there.
        sys.path[0] = os.path.dirname(os.path.realpath(script))
    sys.modules["__main__"] = module  # pickle and multiprocessing's spawn look there
    exec(code, module.__dict__)


def print_uncaught(exc: BaseException, *launcher_files: str) -> None:
    """Report `exc` through `sys.excepthook` as the interpreter reports an uncaught exception,
    leaving out the leading frames that belong to this module or to `launcher_files`."""
    skip = {__file__, *launcher_files}
    tb: TracebackType | None = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename in skip:
        tb = tb.tb_next
    sys.excepthook(type(exc), exc.with_traceback(tb), tb)


def parse_target(parser: argparse.ArgumentParser,
                 argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The launcher's options (before `--`, plus `--pytest`) and the target after `--`, so
    that the target's own options never reach `parser`. Usage errors exit 2."""
    parser.add_argument("--pytest", action="store_true", help="run pytest with the arguments")
    if "--" not in argv:
        parser.error("expected '--' before the script (or before pytest's arguments with "
                     "--pytest)")
    cut = argv.index("--")
    opts = parser.parse_args(argv[:cut])
    target = argv[cut + 1:]
    if not opts.pytest and not target:
        parser.error("no script after '--'")
    return opts, target


def run_then(target: list[str], pytest: bool, finish: Callable[[], None],
             *launcher_files: str, code_name: str | None = None) -> None:
    """Run `target` as `__main__`, then `finish()`, then re-raise whatever ended it so the
    interpreter exits as the payload would; a traceback prints last, minus launcher frames."""
    ending: BaseException | None = None
    try:
        run_as_main(target, pytest, code_name)
    except BaseException as exc:  # noqa: BLE001 - handed back to the interpreter below
        ending = exc
    finish()
    if ending is not None:
        if not isinstance(ending, SystemExit):
            print_uncaught(ending, *launcher_files)
            sys.excepthook = _quiet_hook
        raise ending


def _quiet_hook(kind: type[BaseException], value: BaseException, tb: Any) -> None:
    """The uncaught exception was already reported, without the launcher's frames."""
