"""Run a Python script (or pytest) under cProfile and keep its exit status:
`python -m aorta.launchers.cprofile_run --out FILE [--pytest] -- TARGET [ARGS...]`.

`python -m cProfile` swallows SystemExit, so `sys.exit(3)` in a payload would read as a pass;
this launcher profiles the same way (cProfile.Profile around the script), always writes the
dump (also when the payload raises or exits), and then ends as the payload ended.
"""

from __future__ import annotations

import argparse
import cProfile
import sys

from aorta.launchers.as_main import parse_target, run_then


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m aorta.launchers.cprofile_run")
    parser.add_argument("--out", required=True, help="the pstats file to write")
    opts, target = parse_target(parser, sys.argv[1:] if argv is None else argv)
    profiler = cProfile.Profile()

    def finish() -> None:
        profiler.disable()
        profiler.dump_stats(opts.out)

    profiler.enable()
    run_then(target, opts.pytest, finish, __file__)


if __name__ == "__main__":
    main()
