"""What the profiling examples are: the list the tests hold the tree and the READMEs to."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROFILING = ROOT / "examples" / "profiling"
INDEX = PROFILING / "README.md"
FENCE = re.compile(r"```(?:sh|bash)?\n(.*?)```", re.DOTALL)

#: category directory -> the collector its examples use (the same name, by rule).
CATEGORIES = ("rocprof", "proton", "ncu", "nsys", "torch")

#: "<category>/<example>" -> payload file name.
PAYLOADS = {
    "rocprof/hip-gemm": "gemm.hip",
    "rocprof/torch-matmul": "matmul.py",
    "proton/triton-vecadd": "vecadd.py",
    "proton/triton-softmax": "softmax.py",
    "proton/amd-roctracer": "pipeline.py",
    "proton/amd-instrumentation": "hotspot.py",
    "proton/amd-rocprofiler": "gelu.py",
    "proton/nvidia-instrumentation": "rmsnorm.py",
    "ncu/cuda-gemm": "gemm.cu",
    "nsys/torch-matmul": "matmul.py",
    "torch/torch-matmul": "matmul.py",
}

#: The seed page's seven examples and the exact `aorta` command each README must give.
SEED_COMMANDS = {
    "rocprof/hip-gemm": "aorta sweep run --recipe examples/profiling/rocprof/hip-gemm/recipe.yaml "
                        "--output ./profiling_results -- /tmp/hip_gemm 512 20",
    **{key: f"aorta sweep run --recipe examples/profiling/{key}/recipe.yaml --output "
            f"./profiling_results -- python examples/profiling/{key}/{PAYLOADS[key]}"
       for key in ("rocprof/torch-matmul", "proton/triton-vecadd", "proton/triton-softmax",
                   "proton/amd-roctracer", "proton/amd-instrumentation",
                   "proton/amd-rocprofiler")},
}

#: Files that must stay byte-for-byte copies of one another (one source, several examples).
SAME_SOURCE = (
    ("rocprof/hip-gemm/gemm.hip", "ncu/cuda-gemm/gemm.cu"),
    ("rocprof/torch-matmul/matmul.py", "nsys/torch-matmul/matmul.py",
     "torch/torch-matmul/matmul.py"),
)

#: Examples that run only on AMD GPUs; their READMEs say they are unverified here.
AMD_ONLY = ("rocprof/hip-gemm", "rocprof/torch-matmul", "proton/amd-roctracer",
            "proton/amd-rocprofiler")


@dataclass(frozen=True)
class Example:
    key: str                  # "<category>/<example>"

    @property
    def category(self) -> str:
        return self.key.split("/")[0]

    @property
    def directory(self) -> Path:
        return PROFILING / self.key

    @property
    def payload(self) -> Path:
        return self.directory / PAYLOADS[self.key]

    @property
    def recipe(self) -> Path:
        return self.directory / "recipe.yaml"

    @property
    def readme(self) -> Path:
        return self.directory / "README.md"


EXAMPLES = tuple(Example(key) for key in PAYLOADS)
PYTHON_EXAMPLES = tuple(e for e in EXAMPLES if e.payload.suffix == ".py")
PROTON_EXAMPLES = tuple(e for e in EXAMPLES if e.category == "proton")


def section(text: str, heading: str) -> str:
    start = text.index(heading + "\n")
    end = text.find("\n## ", start + len(heading))
    return text[start:] if end < 0 else text[start:end]


def commands(block: str) -> list[str]:
    """Shell commands of the fenced blocks in `block`, continuation lines joined."""
    found = []
    for fence in FENCE.findall(block):
        joined = re.sub(r"\s*\\\n\s*", " ", fence)
        found += [line.strip() for line in joined.splitlines()
                  if line.strip() and not line.lstrip().startswith("#")]
    return found


def aorta_command(example: Example) -> str:
    runs = [c for c in commands(section(example.readme.read_text(), "## Run it under aorta"))
            if c.startswith("aorta sweep run")]
    assert runs, f"{example.readme}: no `aorta sweep run` command under 'Run it under aorta'"
    return runs[0]
