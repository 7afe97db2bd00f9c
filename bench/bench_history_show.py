"""How long `aorta history show` and `aorta history report` take on a long SQLite history,
and how large the page is.

The history is written straight through the store's tables (as `history add` would leave
it, without reading thousands of run directories): one context, RUNS runs an hour apart, each
with 2 cells x 3 trials of 4 metrics (wall_s, cpu_user_s, cpu_sys_s, max_rss_mib) and a
cProfile table of 12 functions every run calls plus 2 start-up functions whose names change
from run to run (as cProfile's addresses did), so the history holds many one-run kernel
series. wall_s of cell `naive` steps up 10% at 70% of the runs.

Each command runs as its own process (`python -m aorta`), the median of REPEATS runs:

    python bench/bench_history_show.py [--runs 5000] [--repeats 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
sys.path.insert(0, str(SRC))

from aorta.history.db import open_history, transaction  # noqa: E402
from aorta.history.schema import CONTEXTS, KERNELS, RUNS, SAMPLES  # noqa: E402

CELLS = ("naive", "numpy")
METRICS = {"wall_s": 2.0, "cpu_user_s": 1.9, "cpu_sys_s": 0.05, "max_rss_mib": 120.0}
FUNCTIONS = [f"examples/quickstart/matmul.py:{10 + i}(step_{i})" for i in range(12)]


def build(path: Path, runs: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    with open_history(str(path)) as db, transaction(db, write=True) as conn:
        context = conn.execute(CONTEXTS.insert().values(
            key="0" * 64, recipe="examples/quickstart/recipe.yaml", host="bench-1",
            gpu="none", collect='{"cprofile":{}}').returning(CONTEXTS.c.id)).scalar_one()
        for number in range(runs):
            when = time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime(1.7e9 + 3600 * number))
            run_id = conn.execute(RUNS.insert().values(
                uid=f"{number:064d}", context_id=context, name=f"run{number:05d}",
                command=json.dumps(["python", "matmul.py"]), created_at=when,
                recorded_at=when, status="complete", commit_sha=f"{rng.getrandbits(160):040x}",
                commit_dirty=False, commit_source="given", trials_passed=6, trials_total=6,
            ).returning(RUNS.c.id)).scalar_one()
            samples, kernels = [], []
            for cell in CELLS:
                for trial in range(3):
                    for metric, level in METRICS.items():
                        step = 1.1 if (metric, cell) == ("wall_s", "naive") and \
                            number >= runs * 0.7 else 1.0
                        samples.append({"run_id": run_id, "cell": cell, "metric": metric,
                                        "trial": trial,
                                        "value": level * step * rng.gauss(1, 0.01)})
                    names = FUNCTIONS + [f"<built-in method __new__ at 0x{rng.getrandbits(48):x}>",
                                         f"<frozen importlib._bootstrap>:{rng.randint(1, 9999)}"
                                         f"(_load)"]
                    kernels += [{"run_id": run_id, "cell": cell, "source": "cprofile_functions",
                                 "name": name, "trial": trial, "calls": 1,
                                 "total_ms": (50 - i) * rng.gauss(1, 0.02)}
                                for i, name in enumerate(names)]
            conn.execute(SAMPLES.insert(), samples)
            conn.execute(KERNELS.insert(), kernels)


def timed(args: list[str], repeats: int) -> tuple[float, list[float], float]:
    """Median wall time, every wall time, and the median CPU time (user + system) of the
    process: on a shared machine the CPU time says more."""
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    times, cpu = [], []
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "aorta", *args], env=env, check=False,
                       stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return statistics.median(times), times, statistics.median(cpu)


def breakdown(db: Path) -> str:
    """Where `history show`'s CPU time goes, in this process: reading the series, searching
    them for steps, writing the listing (the process's start and imports are the rest)."""
    from aorta.history.analyse import Analysed
    from aorta.history.changes import detect_changes
    from aorta.history.render_text import listing_lines
    from aorta.history.store import Filters, load_history

    start = time.process_time()
    with open_history(str(db), create=False) as opened:
        series = load_history(opened, Filters(), 200, 5).series
    read = time.process_time()
    items = [Analysed(s, tuple(detect_changes(s))) for s in series]
    detected = time.process_time()
    listing_lines(items)
    return (f"read {read - start:.2f} s ({len(series)} series, "
            f"{sum(len(s.points) for s in series):,} points), detect {detected - read:.2f} s, "
            f"list {time.process_time() - detected:.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the history in this folder")
    opts = parser.parse_args()
    folder = opts.keep or Path(tempfile.mkdtemp(prefix="aorta-bench-history-"))
    folder.mkdir(parents=True, exist_ok=True)
    db = folder / f"history-{opts.runs}.sqlite"
    if not db.exists():
        start = time.perf_counter()
        build(db, opts.runs)
        print(f"built {db} ({opts.runs} runs) in {time.perf_counter() - start:.1f} s")
    page = folder / "history.html"
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load {os.getloadavg()[0]:.1f}")
    cases = {
        "show (list every series)": ["history", "show", "--db", str(db)],
        "show --cell naive --metric wall_s": ["history", "show", "--db", str(db),
                                              "--cell", "naive", "--metric", "wall_s"],
        "show --format json": ["history", "show", "--db", str(db), "--format", "json"],
        "report (default range)": ["history", "report", "--db", str(db), "--output", str(page)],
        "report --all-runs": ["history", "report", "--db", str(db), "--output", str(page),
                              "--all-runs"],
    }
    for name, args in cases.items():
        middle, times, cpu = timed(args, opts.repeats)
        size = f", page {page.stat().st_size / 1e6:.2f} MB" if "report" in name else ""
        print(f"{name}: median {middle:.2f} s (runs {', '.join(f'{t:.2f}' for t in times)}), "
              f"CPU {cpu:.2f} s{size}")
    print(f"show, CPU in one process: {breakdown(db)}")


if __name__ == "__main__":
    main()
