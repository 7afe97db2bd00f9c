"""Run a Python script (or pytest) under cProfile and keep its exit status:
`python -m aorta.launchers.cprofile_run --out FILE [--pytest] -- TARGET [ARGS...]`.

`python -m cProfile` swallows SystemExit, so `sys.exit(3)` in a payload would read as a pass;
this launcher profiles the same way (cProfile.Profile around the script), always writes the
dump (also when the payload raises or exits), and then ends as the payload ended (also when
the dump could not be written: that is the capture's problem, not the payload's).
"""

from __future__ import annotations

import cProfile
import sys

from aorta.launchers.as_main import run_then, script_problem

USAGE = "usage: python -m aorta.launchers.cprofile_run --out FILE [--pytest] -- TARGET [ARGS...]"


def main(argv: list[str] | None = None) -> None:
    # Parsed by hand: argparse would import gettext, locale and re before the profile
    # starts, and the payload's own imports of them would then be missing from it.
    args = list(sys.argv[1:] if argv is None else argv)
    cut = args.index("--") if "--" in args else len(args)
    head, target = args[:cut], args[cut + 1:]
    pytest = "--pytest" in head
    options = [a for a in head if a != "--pytest"]
    if len(options) != 2 or options[0] != "--out" or not (target or pytest):
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    problem = None if pytest else script_problem(target[0])
    if problem:         # as `python missing.py` ends: no profile of the launcher alone
        print(f"aorta: cprofile: {problem}", file=sys.stderr)
        raise SystemExit(2)
    profiler = cProfile.Profile()

    def finish() -> None:
        profiler.disable()
        try:
            profiler.dump_stats(options[1])
        except OSError as exc:
            print(f"aorta: cprofile: could not write {options[1]}: {exc.strerror or exc}",
                  file=sys.stderr)

    profiler.enable()
    # Functions are named after the script as the command typed it (`examples/m.py:16(f)`),
    # as `python -m cProfile` names them: the same payload reads the same from any checkout.
    run_then(target, pytest, finish, __file__, code_name=None if pytest else target[0])


if __name__ == "__main__":
    main()
