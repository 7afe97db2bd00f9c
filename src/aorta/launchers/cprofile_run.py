"""Run a Python script (or pytest) under cProfile and keep its exit status:
`python -m aorta.launchers.cprofile_run --out FILE [--pytest] -- TARGET [ARGS...]`.

`python -m cProfile` swallows SystemExit, so `sys.exit(3)` in a payload would read as a pass;
this launcher profiles the same way (cProfile.Profile around the script), always writes the
dump (also when the payload raises or exits), and exits with the payload's own status.
"""

from __future__ import annotations

import cProfile
import os
import runpy
import sys
import traceback


def _exit_code(exc: SystemExit) -> int:
    """What the interpreter would exit with for this SystemExit."""
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)   # sys.exit("message") prints it and exits 1
    return 1


def run_target(target: list[str], pytest: bool) -> int:
    if pytest:
        import pytest as _pytest

        return int(_pytest.main(target))
    sys.argv = list(target)
    sys.path.insert(0, os.path.dirname(os.path.abspath(target[0])))
    runpy.run_path(target[0], run_name="__main__")
    return 0


def main(argv: list[str]) -> int:
    pytest = "--pytest" in argv[:3]
    args = [a for a in argv if a != "--pytest"] if pytest else list(argv)
    if len(args) < 3 or args[0] != "--out" or "--" not in args:
        print("aorta cprofile_run: usage: --out FILE [--pytest] -- TARGET [ARGS...]",
              file=sys.stderr)
        return 2
    out, target = args[1], args[args.index("--") + 1:]
    if not target and not pytest:
        print("aorta cprofile_run: no script to run", file=sys.stderr)
        return 2
    profiler = cProfile.Profile()
    code = 1
    profiler.enable()
    try:
        code = run_target(target, pytest)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:   # the payload's own error: report it as Python would, exit 1
        traceback.print_exc()
        code = 1
    finally:
        profiler.disable()
        profiler.dump_stats(out)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
