"""The environment snapshot (`env.json`, docs/sweep.md): what machine and software a run
measured, taken once per run. `snapshot()` never raises: what it cannot read is null, with the
reason in `partial_reasons`. Packages come from installed metadata: torch is never imported.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from typing import Any

from aorta.base.redaction import PATTERN_ONLY
from aorta.base.version import VERSION as __version__
from aorta.base.version import dist_version
from aorta.host.health import nvidia_rows, system_health
from aorta.host.stack import (container_info, hip_info, hipblaslt_info, python_env_info, read_text,
                              tool_output)

ENV_SCHEMA = 1
PACKAGES = ("torch", "triton", "numpy", "jax", "jaxlib", "pytorch-triton-rocm", "nvidia-ml-py",
            "cupy-cuda12x", "cupy-cuda13x", "transformers", "vllm", "flash-attn", "deepspeed")
STEERING_PREFIXES = ("CUDA_", "HIP_", "ROCR_", "ROCM_", "HSA_", "NCCL_", "RCCL_", "TORCH_",
                     "PYTORCH_", "TRITON_", "OMP_", "MKL_", "OPENBLAS_", "NVIDIA_", "CUBLAS_",
                     "CUDNN_", "MIOPEN_", "AMD_", "GPU_", "XLA_", "JAX_", "TF_", "AORTA_",
                     "LD_LIBRARY_PATH", "LD_PRELOAD", "PATH", "PYTHONPATH", "SLURM_")


def steering_env(env: Mapping[str, str]) -> dict[str, str]:
    """The variables that steer GPU software, credentials redacted."""
    picked = {k: v for k, v in env.items() if k.startswith(STEERING_PREFIXES)}
    return PATTERN_ONLY.env(dict(sorted(picked.items())))


def snapshot(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The host, its GPUs and the software that matters, as a JSON-ready mapping."""
    env = os.environ if env is None else env
    reasons: dict[str, str] = {}

    def attempt(key: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:  # a snapshot must never stop a run
            reasons[key] = f"{type(exc).__name__}: {exc}"
            return None

    snap: dict[str, Any] = {
        "schema_version": ENV_SCHEMA,
        "captured_at": time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()),
        "aorta_version": __version__,
        "host": attempt("host", _host),
        "python": {"version": platform.python_version(), "executable": sys.executable,
                   "implementation": platform.python_implementation()},
        "packages": attempt("packages", _packages),
        "nvidia": attempt("nvidia", lambda: nvidia_rows(_NV_FIELDS)),
        "amd": attempt("amd", _amd),
        "cuda_version": attempt("cuda_version", _cuda_version),
        "rocm_version": attempt("rocm_version", _rocm_version),
        "hip": attempt("hip", lambda: hip_info(env)),
        "hipblaslt": attempt("hipblaslt", lambda: hipblaslt_info(env)),
        "container": attempt("container", lambda: container_info(env)),
        "python_env": attempt("python_env", lambda: python_env_info(env)),
        "system_health": attempt("system_health", system_health),
        "env_vars": steering_env(env),
    }
    for key in ("nvidia", "amd"):
        if snap[key] is None and key not in reasons:
            reasons[key] = f"no {key} tool found on PATH"
    snap["partial_reasons"] = reasons
    snap["partial"] = bool(reasons.keys() - {"nvidia", "amd"})
    return snap


def _host() -> dict[str, Any]:
    uname = os.uname()
    # "MemTotal:       24576000 kB"
    found = re.search(r"^MemTotal:\s+(\d+)", read_text("/proc/meminfo") or "", re.MULTILINE)
    mem_kib = int(found.group(1)) if found else None
    return {"hostname": uname.nodename, "os": uname.sysname, "kernel": uname.release,
            "machine": uname.machine, "distro": _distro(), "cpu": _cpu_model(),
            "cpu_count": os.cpu_count(),
            "memory_gib": round(mem_kib / 1024 / 1024, 2) if mem_kib else None}


def _distro() -> str | None:
    """PRETTY_NAME of os-release(5); None where the system has no os-release file."""
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME", "Linux")
    except OSError:
        return None


def _cpu_model() -> str | None:
    # "model name	: AMD EPYC 9654 96-Core Processor", in the first CPU's block
    found = re.search(r"^model name\s*:(.*)$", read_text("/proc/cpuinfo") or "", re.MULTILINE)
    # No /proc (another system) or no model name line (many ARM CPUs): platform knows better.
    return found.group(1).strip() if found else platform.processor() or None


def _packages() -> dict[str, str | None]:
    """The installed ones of PACKAGES, with their versions."""
    found: dict[str, str | None] = {}
    for name in PACKAGES:
        with suppress(importlib.metadata.PackageNotFoundError):
            found[name] = dist_version(importlib.metadata.distribution(name))
    return found


_NV_FIELDS = ("index", "name", "uuid", "driver_version", "memory.total", "clocks.sm",
              "clocks.max.sm", "clocks.mem", "power.limit", "temperature.gpu", "pci.bus_id")


def _amd() -> dict[str, Any] | None:
    for argv in (["amd-smi", "static", "--json"], ["rocm-smi", "--showproductname", "--json"]):
        if (out := tool_output(argv)) is not None:
            return {"tool": argv[0], "data": json.loads(out)}
    return None


def _cuda_version() -> str | None:
    # nvcc: "Cuda compilation tools, release 13.0, V13.0.48"; nvidia-smi: "CUDA Version: 13.0"
    return (_version_after(tool_output(["nvcc", "--version"]) or "", "release ")
            or _version_after(tool_output(["nvidia-smi"]) or "", "CUDA Version:"))


def _version_after(text: str, label: str) -> str | None:
    """The dotted number after the first `label` in `text` that has one, or None."""
    found = re.search(re.escape(label) + r"\s*([0-9.]+)", text)
    return found.group(1) if found else None


def _rocm_version() -> str | None:
    versions = (read_text(p) for p in ("/opt/rocm/.info/version", "/opt/rocm/.info/version-dev"))
    return next((text.strip() for text in versions if text is not None), None)
