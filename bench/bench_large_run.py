"""Reading a large run: every command that reads a 10-cell x 1,000-trial cProfile run, against a
plain `json.load` of the same record files.

The run is built once (`--root`, default a folder under the system's temporary directory): a
real one-trial-per-cell sweep of a tiny Python payload under cProfile gives run.json, the
resolved recipe and a real record per cell; every other trial's `result.json` is then written
directly in the store's format (`json_text`), each with its own figures and a cProfile table of
`--functions` rows (the collector's cap is 50) named as cProfile names them. run.json is set to
the full trial count, so the same sweep command with `--trials N` has nothing left to run.

Each command then runs `--repeats` times in a fresh process (the commands taking turns); the
figures are the median wall time, the median CPU time (user + system: steadier than the wall
time on a shared machine) and the peak RSS of the child (`os.wait4`):

- no-op resume: `aorta sweep run` on the complete run;
- `aorta sweep status RUN`;
- `aorta report RUN --output FILE` (HTML), with the page's size;
- `aorta compare RUN RUN`;
- `aorta.open_run(RUN)` with `trials_frame()` and `kernels_frame()` (pandas);
- the yardstick: `json.load` of run.json and every `result.json` in the run, each parsed
  document dropped once read (what a reader that aggregates as it goes needs to hold).

    python bench/bench_large_run.py [--cells 10] [--trials 1000] [--functions 50]
                                    [--repeats 3] [--baseline DIR/src] [--only NAME,...]

`--baseline` runs each command a second time, by turns, with another tree's sources first on
PYTHONPATH (the tree before a change, from `git archive`).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parent.parent / "src")
sys.path.insert(0, SRC)

from aorta.store.files import json_text  # noqa: E402

PAYLOAD = "import sys\nprint(sum(i * i for i in range(1000)))\n"
JSON_LOAD = """
import json, os, sys
root = sys.argv[1]
with open(os.path.join(root, 'run.json'), 'rb') as fh:
    json.load(fh)
count = 1
for cell in sorted(os.listdir(os.path.join(root, 'cells'))):
    for trial in os.listdir(os.path.join(root, 'cells', cell)):
        with open(os.path.join(root, 'cells', cell, trial, 'result.json'), 'rb') as fh:
            json.load(fh)
        count += 1
print(count)
"""
OPEN_RUN = """
import sys, aorta
run = aorta.open_run(sys.argv[1])
print(len(run.trials_frame()), len(run.kernels_frame()))
"""


def recipe(cells: int) -> str:
    values = "\n".join(f"    c{i:02d}: {{args: [--cell, '{i}']}}" for i in range(cells))
    return (f"schema_version: 1\nmode: probe\nticket: large\ntrials: 1\n"
            f"collect:\n  cprofile:\n    sort: tottime\naxes:\n  cell:\n{values}\n")


def function_names(count: int, rng: random.Random) -> list[str]:
    """Names as cProfile writes them: `file:line(func)`, built-ins, methods of objects."""
    files = ["payload.py", "/usr/lib/python3.11/json/decoder.py", "numpy/core/numeric.py",
             "/usr/lib/python3.11/random.py", "torch/nn/modules/module.py"]
    names = ["<built-in method builtins.exec>", "{method 'append' of 'list' objects}",
             "{built-in method time.perf_counter}", "<listcomp>"]
    while len(names) < count:
        names.append(f"{rng.choice(files)}:{rng.randint(1, 900)}(func_{len(names)})")
    return names[:count]


def build(root: Path, cells: int, trials: int, functions: int) -> Path:
    """The run directory (built once; kept when it is already there, complete)."""
    run_dir = root / "out" / "large"
    done = root / "built.json"
    spec = {"cells": cells, "trials": trials, "functions": functions}
    if done.exists() and json.loads(done.read_text()) == spec:
        return run_dir
    root.mkdir(parents=True, exist_ok=True)
    (root / "recipe.yaml").write_text(recipe(cells))
    (root / "payload.py").write_text(PAYLOAD)
    subprocess.run(sweep_argv(root, 1), cwd=root, env=child_env(SRC), check=True,
                   capture_output=True)
    rng = random.Random(25)
    names = function_names(functions, rng)
    for cell_dir in sorted((run_dir / "cells").iterdir()):
        template = json.loads((cell_dir / "trial_0" / "result.json").read_text())
        for index in range(1, trials):
            doc = dict(template, index=index, wall_s=0.2 + rng.random() / 10,
                       cpu_user_s=0.15 + rng.random() / 10, max_rss_mib=17 + rng.random())
            table = [{"name": n, "calls": rng.randint(1, 20000),
                      "total_ms": round(rng.expovariate(1.0), 6)} for n in names]
            table.sort(key=lambda r: -r["total_ms"])
            doc["metrics"] = dict(template["metrics"], cprofile_functions=table,
                                  cprofile_time_ms=sum(r["total_ms"] for r in table),
                                  cprofile_top_function_ms=table[0]["total_ms"],
                                  cprofile_top_functions=[r["name"] for r in table[:5]])
            trial = cell_dir / f"trial_{index}"
            trial.mkdir(exist_ok=True)
            (trial / "result.json").write_text(json_text(doc))
    run_json = run_dir / "run.json"
    run_json.write_text(json_text(dict(json.loads(run_json.read_text()),
                                       trials_per_cell=trials)))
    done.write_text(json.dumps(spec))
    return run_dir


def sweep_argv(root: Path, trials: int) -> list[str]:
    return [sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(root / "recipe.yaml"),
            "--output", str(root / "out"), "--trials", str(trials), "--", sys.executable,
            "payload.py"]


def child_env(src: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE",)}
    env["PYTHONPATH"] = src
    return env


def commands(root: Path, run_dir: Path, trials: int) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "json.load": [py, "-c", JSON_LOAD, str(run_dir)],
        "resume": sweep_argv(root, trials),
        "status": [py, "-m", "aorta", "sweep", "status", str(run_dir)],
        "report": [py, "-m", "aorta", "report", str(run_dir), "--output",
                   str(root / "report.html")],
        "compare": [py, "-m", "aorta", "compare", str(run_dir), str(run_dir)],
        "open_run": [py, "-c", OPEN_RUN, str(run_dir)],
    }


def measure(argv: list[str], cwd: Path, src: str) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS MiB, exit code, CPU seconds) of one child."""
    start = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, env=child_env(src), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    assert child.stderr is not None
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if child.returncode not in (0, 1):   # compare exits 1 when a gate fails: not here
        sys.stderr.write(err.decode(errors="replace")[-2000:])
    return wall, usage.ru_maxrss / 1024, child.returncode, usage.ru_utime + usage.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cells", type=int, default=10)
    ap.add_argument("--trials", type=int, default=1000)
    ap.add_argument("--functions", type=int, default=50)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--root", type=Path,
                    default=Path(tempfile.gettempdir()) / "aorta_bench_large_run")
    ap.add_argument("--baseline", help="another tree's src/, run by turns with this one")
    ap.add_argument("--only", help="comma-separated command names")
    args = ap.parse_args()
    run_dir = build(args.root, args.cells, args.trials, args.functions)
    todo = commands(args.root, run_dir, args.trials)
    if args.only:
        todo = {k: v for k, v in todo.items() if k in args.only.split(",")}
    trees = {"this tree": SRC} | ({"baseline": args.baseline} if args.baseline else {})
    figures: dict[tuple[str, str], list[tuple[float, float, int, float]]] = {}
    for name, argv in todo.items():
        for tree, src in trees.items():
            measure(argv, args.root, src)   # warm: bytecode and the page cache
        for _ in range(args.repeats):
            for tree, src in trees.items():
                figures.setdefault((name, tree), []).append(measure(argv, args.root, src))
    size = sum(f.stat().st_size for f in run_dir.rglob("result.json"))
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}; {args.cells} cells x {args.trials} trials, "
          f"{args.functions} functions a table, {size / 2**20:.0f} MiB of result.json")
    yardstick: dict[str, tuple[float, float]] = {}
    for (name, tree), runs in figures.items():
        wall, cpu = statistics.median(r[0] for r in runs), statistics.median(r[3] for r in runs)
        rss = max(r[1] for r in runs)
        if name == "json.load":
            yardstick.setdefault(tree, (wall, cpu))
        ratio = (f", {wall / yardstick[tree][0]:.2f}x json.load (CPU {cpu:.2f} s, "
                 f"{cpu / yardstick[tree][1]:.2f}x)") if tree in yardstick else ""
        page = ""
        if name == "report" and (args.root / "report.html").exists():
            page = f", page {(args.root / 'report.html').stat().st_size / 2**20:.1f} MiB"
        codes = sorted({r[2] for r in runs})
        print(f"{name:10} {tree:10} median {wall:6.2f} s (runs "
              f"{', '.join(f'{r[0]:.2f}' for r in runs)}), peak {rss:5.0f} MiB{ratio}{page}"
              f", exit {codes}")


if __name__ == "__main__":
    main()
