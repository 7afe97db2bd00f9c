"""Start-up of the commands that run no trial, against bare Python, whole process each time.

Each command runs `--repeats` times in a fresh interpreter (the commands taking turns, so load
on a shared machine falls on all of them alike); the figure is the median wall time and its
ratio to `python -c pass` measured in the same run. `import click` is measured too: it is the
floor of any click-based command. The budget (bench/README.md): `aorta --help` within 10x of
bare Python, `aorta sweep status RUN` within 0.5 s; the last lines say whether each is met.

    python bench/bench_startup.py [--repeats 21] [--baseline DIR/src] [--via script|module]
                                  [--skip doctor]

`--baseline` times the same commands with another tree's sources first on PYTHONPATH (e.g. the
tree before a change, from `git archive`), in the same run. `--via script` (the default) starts
each command as a user does, through the installed `aorta` script beside this interpreter;
`--via module` through `python -m aorta`, which adds `runpy` and `importlib.util` to every
start.

Bytecode is allowed (PYTHONDONTWRITEBYTECODE is dropped for the children) and every command
runs once before timing, so both trees are measured from their `__pycache__`, as an installed
aorta is; without it each start would recompile aorta's modules.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMANDS: list[tuple[str, list[str]]] = [
    ("python -c pass", ["-c", "pass"]),
    ("python -c 'import click'", ["-c", "import click"]),
    ("aorta --help", ["-m", "aorta", "--help"]),
    ("aorta --version", ["-m", "aorta", "--version"]),
    ("aorta compare --help", ["-m", "aorta", "compare", "--help"]),
    ("aorta sweep run --help", ["-m", "aorta", "sweep", "run", "--help"]),
    ("aorta env", ["-m", "aorta", "env"]),
    ("aorta sweep status", ["-m", "aorta", "sweep", "status", "{run}"]),
    ("aorta sweep status --json", ["-m", "aorta", "sweep", "status", "{run}", "--json"]),
    ("aorta collectors", ["-m", "aorta", "collectors"]),
    ("aorta doctor", ["-m", "aorta", "doctor"]),
    ("aorta doctor -- python3 t.py", ["-m", "aorta", "doctor", "--", "python3", "t.py"]),
]


def _env(src: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONDONTWRITEBYTECODE", "COLUMNS", "LINES")}
    if src:      # first on the path; what else the caller's PYTHONPATH holds stays behind it
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH")]))
    return env


def _via(argv: list[str], via: str) -> list[str]:
    """`argv` (`-m aorta ...` or `-c ...`) as `--via` starts it."""
    if argv[:2] != ["-m", "aorta"] or via == "module":
        return argv
    script = Path(sys.executable).with_name("aorta")
    if not script.is_file():
        raise SystemExit(f"no aorta script beside {sys.executable}: pip install -e . first, "
                         f"or use --via module")
    return [str(script), *argv[2:]]


def _once(argvs: list[list[str]], env: dict[str, str]) -> float:
    """Wall time of the commands `argvs`, started together, until the last one ends."""
    start = time.perf_counter()
    procs = [subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
             for argv in argvs]
    errors = [proc.communicate()[1] for proc in procs]
    elapsed = time.perf_counter() - start
    for argv, proc, err in zip(argvs, procs, errors):
        if proc.returncode != 0:   # a command that fails is not a figure
            raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: "
                             f"{err.decode(errors='replace').strip()[-500:]}")
    return elapsed


def _make_run(workdir: Path, env: dict[str, str]) -> Path:
    """A finished two-trial run of `/bin/true`, for `sweep status` to read."""
    workdir.mkdir(parents=True, exist_ok=True)
    recipe = workdir / "r.yaml"
    recipe.write_text("schema_version: 1\nticket: startup\ntrials: 2\n")
    out = workdir / "run"
    subprocess.run([sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe),
                    "--output", str(out), "--fresh", "--", "/bin/true"],
                   env=env, check=True, capture_output=True)
    return out / "startup"          # the run lands under its ticket


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--baseline", help="another tree's src directory, timed in the same run")
    parser.add_argument("--skip", action="append", default=[], metavar="COMMAND",
                        help="leave out the commands whose label contains this, e.g. doctor")
    parser.add_argument("--via", choices=("script", "module"), default="script",
                        help="start aorta through its installed script or python -m aorta")
    args = parser.parse_args()
    trees: dict[str, str | None] = {"this tree": None}     # as the caller's environment has it
    if args.baseline:
        trees["baseline"] = args.baseline
    with tempfile.TemporaryDirectory() as tmp:
        runs = {tree: _make_run(Path(tmp) / tree.replace(" ", "_"), _env(src))
                for tree, src in trees.items()}     # each tree reads a run it wrote
        jobs = [(tree, label,
                 [[sys.executable, *_via([a.replace("{run}", str(runs[tree])) for a in argv],
                                         args.via)]])
                for tree in trees for label, argv in COMMANDS
                if (tree == "this tree" or argv[0] == "-m")
                and not any(word in label for word in args.skip)]
        times: dict[tuple[str, str], list[float]] = {(t, lab): [] for t, lab, _ in jobs}
        for tree, label, argvs in jobs:         # writes each tree's bytecode
            _once(argvs, _env(trees[tree]))
        for _ in range(args.repeats):
            for tree, label, argvs in jobs:
                times[(tree, label)].append(_once(argvs, _env(trees[tree])))
    bare = statistics.median(times[("this tree", "python -c pass")])
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, load {os.getloadavg()[0]:.2f}; "
          f"median of {args.repeats} runs, whole process, aorta started via {args.via}")
    for (tree, label), runs in times.items():
        med = statistics.median(runs)
        print(f"{tree:10} {label:32} {med * 1e3:7.1f} ms  {med / bare:5.2f}x bare  "
              f"(quartiles {statistics.quantiles(runs, n=4)[0] * 1e3:.1f}-"
              f"{statistics.quantiles(runs, n=4)[2] * 1e3:.1f})")
    help_x = statistics.median(times[("this tree", "aorta --help")]) / bare
    status_s = statistics.median(times[("this tree", "aorta sweep status")])
    print(f"budget: aorta --help {help_x:.2f}x bare (within 10x: "
          f"{'met' if help_x <= 10 else 'NOT met'}); aorta sweep status {status_s:.3f} s "
          f"(within 0.5 s: {'met' if status_s <= 0.5 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
