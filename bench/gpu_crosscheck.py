"""Do proton, ncu and the torch profiler agree on the same kernels, and what does each cost?

Runs one payload (default: the torch-matmul example, 23 products) under each collector with
`--baseline`, so every profiled trial is followed by one with no collector, then prints:

- per kernel (names normalised as `aorta compare` does): the median GPU time per trial that
  each collector measured, and each collector's ratio to the torch profiler's;
- per collector: the overhead on wall time (ratio of medians with a 95% bootstrap interval).

    python bench/gpu_crosscheck.py --out ./crosscheck [--trials 5] [-- python payload.py ...]

Needs an NVIDIA GPU with Triton (Proton), ncu and a CUDA build of torch. Writes the three run
directories and `crosscheck.md` / `crosscheck.json` under --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

DEFAULT = ["examples/profiling/torch/torch-matmul/matmul.py", "--size", "2048", "--iters", "20"]
COLLECTORS = {
    "proton": "collect:\n  proton: {mode: cli, backend: auto}\n",
    "ncu": "collect:\n  ncu: {clock_control: none, cache_control: none}\n",
    "torch": "collect:\n  torch: {activities: [cpu, gpu]}\n",
}


def run(collector: str, out: Path, trials: int, command: list[str]) -> Path:
    recipe = out / f"{collector}.yaml"
    recipe.write_text(f"schema_version: 1\nticket: crosscheck-{collector}\ntrials: {trials}\n"
                      f"baseline: true\ntimeout_per_trial: 600\n{COLLECTORS[collector]}")
    subprocess.run([sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(recipe),
                    "--output", str(out), "--fresh", "--", *command], check=True)
    return out / f"crosscheck-{collector}"


def kernel_medians(run_dir: Path, collector: str) -> dict[str, float]:
    """Median over passing trials of each kernel's total ms in one trial."""
    from aorta.comparison.names import normalise
    from aorta.store.run_dir import RunStore

    per_kernel: dict[str, list[float]] = {}
    store = RunStore(run_dir)
    for slot in store.slots(store.read_run()):
        result = slot.result
        if result is None or result.baseline or result.verdict != "pass":
            continue
        seen: dict[str, float] = {}
        for row in result.metrics.get(f"{collector}_kernels") or []:
            name = normalise(row["name"])
            seen[name] = seen.get(name, 0.0) + float(row["total_ms"])
        for name, ms in seen.items():
            per_kernel.setdefault(name, []).append(ms)
    return {name: statistics.median(v) for name, v in per_kernel.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("command", nargs="*", help="payload after --")
    args = parser.parse_args()
    command = args.command or [sys.executable, *DEFAULT]
    args.out.mkdir(parents=True, exist_ok=True)
    runs = {c: run(c, args.out, args.trials, command) for c in COLLECTORS}
    medians = {c: kernel_medians(d, c) for c, d in runs.items()}
    overhead = {}
    for c, d in runs.items():
        cell = json.loads((d / "matrix.json").read_text())["cells"][0]
        overhead[c] = cell.get("overhead", {}).get("wall_s")
    names = sorted(set().union(*medians.values()),
                   key=lambda n: -max(m.get(n, 0.0) for m in medians.values()))
    lines = ["| kernel | proton ms | ncu ms | torch ms | proton/torch | ncu/torch |",
             "|---|---:|---:|---:|---:|---:|"]
    totals = {c: sum(m.values()) for c, m in medians.items()}
    for name in names + ["(all kernels)"]:
        row = totals if name == "(all kernels)" else {c: medians[c].get(name) for c in medians}
        ratio = {c: (row[c] / row["torch"]) if row.get(c) and row.get("torch") else None
                 for c in ("proton", "ncu")}
        cells = [f"{row[c]:.4f}" if row.get(c) is not None else "-" for c in COLLECTORS]
        cells += [f"{ratio[c]:.3f}" if ratio[c] else "-" for c in ("proton", "ncu")]
        lines.append(f"| {name[:60]} | " + " | ".join(cells) + " |")
    lines += ["", "| collector | wall-time overhead (profiled / no collector) | 95% interval | n |",
              "|---|---:|---|---|"]
    for c, o in overhead.items():
        if o:
            interval = f"{o['low']:.3f} - {o['high']:.3f}" if o.get("low") else "-"
            lines.append(f"| {c} | {o['ratio']:.3f} | {interval} | "
                         f"{o['n_profiled']} / {o['n_baseline']} |")
    text = "\n".join(lines) + "\n"
    (args.out / "crosscheck.md").write_text(text)
    (args.out / "crosscheck.json").write_text(json.dumps(
        {"kernel_medians_ms": medians, "totals_ms": totals, "overhead_wall": overhead}, indent=2))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
