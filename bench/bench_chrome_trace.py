"""How much memory and time reading a large PyTorch (Kineto) chrome trace takes, by reader.

Generates a trace of about `--mib` MiB (default 760) in a temporary directory by repeating the
events of the real H200 capture `tests/fixtures/torch/h200/mm_trace.json` (CPU operators with
shapes, runtime calls, kernels, memcpys, flow events; 361 events) with shifted timestamps, one
copy of its top-level members around them, written as Kineto writes (one event per line). Then,
each in a fresh process so peak memory is that reader's alone, runs by turns:

- `stream`: per-kernel totals from `aorta.parsers.chrome_trace.read_events`, which streams the
  file with `json_stream.ArrayStream` (the json module's C scanner, one event at a time) and
  checks every event's types
- `json_load`: `json.load` of the whole file, then the same kernel totals (the old reader)
- `ijson`: `ijson.items(f, "traceEvents.item")` with its C backend (yajl2_c), the same totals
  (skipped when ijson is not installed)
- `aorta`: everything the torch collector reads, `aorta.parsers.torch_trace.read_trace_figures`
  (kernels, launch calls, CPU operators nested per thread) over the streamed events

and prints each reader's median wall time, its speed against `json_load`, and peak resident
memory (`ru_maxrss` of the worker process, interpreter and imports included). All must agree on
the kernel totals.

    python bench/bench_chrome_trace.py [--mib 760] [--repeats 3] [--readers aorta,json_load,ijson]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "tests" / "fixtures" / "torch" / "h200" / "mm_trace.json"


def generate(path: Path, mib: int) -> int:
    """Write the trace; returns the number of events."""
    doc = json.loads(SEED.read_text())
    events = doc.pop("traceEvents")
    name = doc.pop("traceName", None)
    span = max(e.get("ts", 0) + e.get("dur", 0) for e in events) - min(
        e.get("ts", math.inf) for e in events if "ts" in e) + 1000
    lines = [json.dumps(e) for e in events]
    count, target = 0, mib << 20
    with open(path, "w") as fh:
        head = json.dumps(doc, indent=2)[:-2]
        fh.write(head + ',\n  "traceEvents": [\n')
        written, copy = fh.tell(), 0
        while written < target:
            shift = copy * span
            block = []
            for event, line in zip(events, lines):
                if "ts" in event:
                    event = dict(event, ts=round(event["ts"] + shift, 3))
                    line = json.dumps(event)
                block.append("  " + line)
            text = ("," if copy else "") + ",\n".join(block) + "\n"
            fh.write(text)
            written += len(text)
            count += len(events)
            copy += 1
        fh.write('  ]' + (f',\n  "traceName": {json.dumps(name)}' if name else "") + "\n}\n")
    return count


def kernels_aorta(path: Path) -> dict[str, list[float]]:
    from aorta.parsers.skips import Skips
    from aorta.parsers.torch_trace import read_trace_figures

    skips = Skips()
    figures = read_trace_figures([path], skips)
    assert not skips, skips.describe()
    return {r.name: [round(r.total_ns, 3), r.calls or 0] for r in figures.kernels.rows.values()}


def _add(totals: dict[str, list[float]], ev: Any) -> None:
    if isinstance(ev, dict) and ev.get("ph") == "X" and ev.get("cat") == "kernel":
        row = totals.setdefault(ev["name"], [0.0, 0])
        row[0] += float(ev["dur"]) * 1e3
        row[1] += 1


def kernels_json_load(path: Path) -> dict[str, list[float]]:
    with open(path, "rb") as fh:
        doc = json.load(fh)
    totals: dict[str, list[float]] = {}
    for ev in doc["traceEvents"]:
        _add(totals, ev)
    return {k: [round(v[0], 3), v[1]] for k, v in totals.items()}


def kernels_ijson(path: Path) -> dict[str, list[float]]:
    import ijson

    totals: dict[str, list[float]] = {}
    with open(path, "rb") as fh:
        for ev in ijson.items(fh, "traceEvents.item", use_float=True):
            _add(totals, ev)
    return {k: [round(v[0], 3), v[1]] for k, v in totals.items()}


def kernels_stream(path: Path) -> dict[str, list[float]]:
    from aorta.parsers.chrome_trace import read_events
    from aorta.parsers.skips import Skips

    skips, totals = Skips(), {}
    for ev in read_events(path, frozenset({"kernel"}), skips):
        row = totals.setdefault(ev.name, [0.0, 0])
        row[0] += ev.dur_us * 1e3
        row[1] += 1
    assert not skips, skips.describe()
    return {k: [round(v[0], 3), v[1]] for k, v in totals.items()}


READERS = {"stream": kernels_stream, "json_load": kernels_json_load, "ijson": kernels_ijson,
           "aorta": kernels_aorta}


def worker(reader: str, path: Path) -> None:
    wall = time.perf_counter()
    totals = READERS[reader](path)
    wall = time.perf_counter() - wall
    print(json.dumps({"wall_s": wall, "cpu_s": time.process_time(),
                      "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "totals": sorted([k, *v] for k, v in totals.items())}))


def run_self(*args: str) -> str:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, __file__, *args], env=env, capture_output=True,
                          text=True, check=True, timeout=3600).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mib", type=int, default=760)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--readers", default="stream,json_load,ijson,aorta")
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--generate", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker[0], Path(args.worker[1]))
        return 0
    if args.generate:
        print(generate(Path(args.generate), args.mib))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "trace.json"
        events = int(run_self("--generate", str(path), "--mib", str(args.mib)))
        print(f"generated {events:,} events, {path.stat().st_size / 2**20:,.0f} MiB")
        wanted = [r for r in args.readers.split(",")
                  if r != "ijson" or importlib.util.find_spec("ijson") is not None]
        runs: dict[str, list[dict[str, Any]]] = {r: [] for r in wanted}
        for _ in range(args.repeats):
            for reader in runs:
                runs[reader].append(json.loads(run_self("--worker", reader, str(path))))
        if len({json.dumps(rs[0]["totals"]) for rs in runs.values()}) != 1:
            print("MISMATCH: the readers disagree", file=sys.stderr)
            return 1
        base = statistics.median(r["wall_s"] for r in runs.get("json_load", next(iter(
            runs.values()))))
        for reader, rs in runs.items():
            wall = statistics.median(r["wall_s"] for r in rs)
            walls = ", ".join("%.2f" % r["wall_s"] for r in rs)
            peak = max(r["peak_mib"] for r in rs)
            print(f"{reader:>10}: median {wall:6.2f} s wall ({base / wall:4.2f}x json_load; "
                  f"runs {walls}), peak RSS {peak:,.0f} MiB")
    print(f"   machine: {platform.machine()}, {os.cpu_count()} cpus, Python "
          f"{platform.python_version()}, {platform.platform()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
