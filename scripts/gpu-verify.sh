#!/usr/bin/env bash
# The project's GPU checks on an NVIDIA machine, from the repository root:
#
#   scripts/gpu-verify.sh OUTDIR tests        the GPU test suites (tests/gpu, the examples' GPU tests)
#   scripts/gpu-verify.sh OUTDIR examples     every NVIDIA-capable example through its README command
#   scripts/gpu-verify.sh OUTDIR crosscheck   proton vs ncu vs torch on one payload, with overhead,
#                                             and `--gpus all`
#
# Logs and a digest of every trial's result land in OUTDIR. The seed's commands say `python`
# and `aorta`; where the machine has only `python3` and aorta is not installed as a command,
# both are provided on PATH for the duration of the script.
set -u
out=$(realpath -m "${1:?usage: scripts/gpu-verify.sh OUTDIR tests|examples|crosscheck}")
phase=${2:?usage: scripts/gpu-verify.sh OUTDIR tests|examples|crosscheck}
mkdir -p "$out"
# aorta's collectors are registered by its installed entry points; a bare checkout has none
python3 -c 'import importlib.metadata as m; m.distribution("aorta")' 2>/dev/null || {
  echo "gpu-verify: aorta is not installed for python3; install it first, e.g." \
       "python3 -m pip install --no-deps --no-build-isolation --target DIR . and DIR on PYTHONPATH" >&2
  exit 2; }
bin=$(mktemp -d)
command -v python >/dev/null || ln -s "$(command -v python3)" "$bin/python"
command -v aorta >/dev/null || { printf '#!/bin/sh\nexec python3 -m aorta "$@"\n' >"$bin/aorta"; chmod +x "$bin/aorta"; }
export PATH="$bin:$PATH" PYTHONUNBUFFERED=1

{
  date -u; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)'
  ncu --version | tail -1; nvcc --version | tail -2
} >"$out/versions-$phase.txt" 2>&1

digest() {  # every result.json under $1: verdict, reason and the small metrics
  python3 - "$1" "$2" <<'PY'
import json, pathlib, sys
rows = []
for p in sorted(pathlib.Path(sys.argv[1]).rglob("result.json")):
    d = json.loads(p.read_text())
    m = {k: v for k, v in d["metrics"].items() if not isinstance(v, (list, dict)) or k.endswith(("_top_kernels", "_scope_cycles", "_ranks"))}
    rows.append({"trial": str(p.parent.relative_to(sys.argv[1])), "verdict": d["verdict"], "reason": d["reason"],
                 "wall_s": d["wall_s"], "device": d["device"], "warnings": d["warnings"], "metrics": m,
                 "stderr_tail": (d.get("stderr_tail") or "")[-1500:]})
pathlib.Path(sys.argv[2]).write_text(json.dumps(rows, indent=1))
PY
}

case "$phase" in
tests)
  timeout 560 python3 -m pytest -q -rs -p no:cacheprovider tests/gpu tests/examples/test_examples_gpu.py \
    >"$out/pytest-gpu.log" 2>&1
  echo "pytest exit: $?" >>"$out/pytest-gpu.log"
  ;;
examples)
  res="$out/profiling_results"
  {
    nvcc -O3 -o /tmp/cuda_gemm examples/profiling/ncu/cuda-gemm/gemm.cu &&
      aorta sweep run --recipe examples/profiling/ncu/cuda-gemm/recipe.yaml --output "$res" -- /tmp/cuda_gemm 512 20
    nvcc -O3 -x cu -o /tmp/hip_gemm examples/profiling/rocprof/hip-gemm/gemm.hip && /tmp/hip_gemm 512 20
    echo "hip_gemm built with nvcc: exit $?"
    for ex in proton/triton-vecadd/vecadd.py proton/triton-softmax/softmax.py \
              proton/nvidia-instrumentation/rmsnorm.py proton/amd-instrumentation/hotspot.py \
              torch/torch-matmul/matmul.py nsys/torch-matmul/matmul.py \
              proton/amd-roctracer/pipeline.py proton/amd-rocprofiler/gelu.py; do
      echo "=== $ex"
      timeout 300 aorta sweep run --recipe "examples/profiling/$(dirname "$ex")/recipe.yaml" \
        --output "$res" -- python "examples/profiling/$ex"
      echo "exit: $?"
    done
    echo "=== torch-matmul --collect proton (the seed's override)"
    aorta sweep run --recipe examples/profiling/torch/torch-matmul/recipe.yaml --collect proton \
      --output "$out/override" -- python examples/profiling/torch/torch-matmul/matmul.py
    echo "=== quickstart"
    aorta sweep run --recipe examples/quickstart/recipe.yaml --output "$out/quickstart" -- \
      python3 examples/quickstart/matmul.py --size 80
  } >"$out/examples.log" 2>&1
  digest "$out" "$out/examples-digest.json"
  ;;
crosscheck)
  {
    timeout 420 python3 bench/gpu_crosscheck.py --out "$out/crosscheck" --trials 5
    echo "crosscheck exit: $?"
    echo "=== --gpus all"
    aorta sweep run --gpus all --trials 2 --collect torch --output "$out/gpus-all" -- \
      python examples/profiling/torch/torch-matmul/matmul.py --iters 5
  } >"$out/crosscheck.log" 2>&1
  digest "$out" "$out/crosscheck-digest.json"
  ;;
*) echo "unknown phase $phase" >&2; exit 2 ;;
esac
rm -rf "$bin"
