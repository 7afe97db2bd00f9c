"""What demangling kernel names costs a parse: `aorta.parsers.demangle` per backend, on real names.

Takes the 14 distinct mangled kernel names of the H200 Proton capture
(`tests/fixtures/proton/h200/cli-tree/proton.hatchet`), makes `--names` distinct ones from them
(a numbered suffix keeps each one mangled and valid), and times, in fresh processes:

- `cxxfilt`: the `cxxfilt` package (`__cxa_demangle` through ctypes), first call included
- `tool`: one `c++filt` process for the whole batch
- `parse`: reading the capture with `HatchetSummary` and publishing its metrics (demangling
  included), against the same with demangling switched off

    python bench/bench_demangle.py [--names 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREE = ROOT / "tests" / "fixtures" / "proton" / "h200" / "cli-tree" / "proton.hatchet"


def names(count: int) -> list[str]:
    found = sorted(set(re.findall(r'"(_Z[^"]+)"', TREE.read_text())))
    # _ZN2at6native...E -> the same name inside a numbered namespace: still valid and distinct
    out = []
    for i in range(count):
        base = found[i % len(found)]
        out.append(base if i < len(found) else f"_ZN1n{len(str(i)) + 1}v{i}" + base[3:])
    return out


def worker(kind: str, count: int) -> dict[str, float]:
    import aorta.parsers.demangle as d

    batch = names(count)
    if kind == "tool":
        tool = shutil.which("c++filt")
        assert tool, "no c++filt on PATH"
        began = time.perf_counter()
        out = d._with_tool(tool, batch)
    elif kind == "cxxfilt":
        began = time.perf_counter()
        out = d.demangle_all(batch)
        assert d.demangler_name() == "cxxfilt"
    else:
        from aorta.parsers.hatchet import HatchetSummary

        if kind == "parse-off":
            d._backend_choice.cache_clear()
            d._backend_choice = lambda: ("none", d._unchanged)  # type: ignore[assignment]
        began = time.perf_counter()
        for _ in range(50):
            summary = HatchetSummary()
            summary.add_file(TREE)
            summary.kernels.metrics("proton")
            d._cache.clear()
        return {"seconds": (time.perf_counter() - began) / 50}
    seconds = time.perf_counter() - began
    assert sum(a != b for a, b in out.items()) >= min(count, 14)
    return {"seconds": seconds}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=1000)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker[0], int(args.worker[1]))))
        return 0
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src"))
    for kind in ("cxxfilt", "tool", "parse-on", "parse-off"):
        done = subprocess.run([sys.executable, __file__, "--worker", kind, str(args.names)],
                              env=env, capture_output=True, text=True, check=True)
        seconds = json.loads(done.stdout)["seconds"]
        what = (f"{args.names} names" if kind in ("cxxfilt", "tool") else
                "one 14-kernel hatchet capture read and published")
        print(f"{kind:>10}: {seconds * 1e3:8.2f} ms for {what}")
    print(f"   machine: {platform.machine()}, {os.cpu_count()} cpus, Python "
          f"{platform.python_version()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
