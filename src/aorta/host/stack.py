"""The software stack around a run, for the environment snapshot: the HIP and hipBLASLt
versions, the container the run is in (if any), and the Python environment. Each reader returns
a JSON-ready mapping of what it found, or why not (`"unavailable": "<reason>"`): absent tools
are normal on the other vendor's machine. Tools run with a timeout, never through a shell; no
container credential is read (only the image name and id fields of the runtime's own file).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import sys
from collections.abc import Mapping
from typing import Any

from aorta.base.redaction import PATTERN_ONLY
from aorta.base.tools import run_tool

TOOL_TIMEOUT_S = 10.0


class NoAnswer(OSError):
    """A snapshot tool did not answer: it could not start, ran past its timeout, or wrote
    without end ("nvidia-smi did not answer within 10 s")."""


def tool_output(argv: list[str], timeout: float = TOOL_TIMEOUT_S) -> str | None:
    """The tool's stdout, or None when it is not on PATH. Raises `NoAnswer`, or RuntimeError
    on a non-zero exit (the caller records why); a timed-out tool is killed with every process
    it started (hipcc, rocm-smi and amd-smi are scripts with children of their own)."""
    if shutil.which(argv[0]) is None:
        return None
    result = run_tool(argv, timeout, merge_stderr=False)
    if result.problem:
        raise NoAnswer(result.problem)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:2])} exited {result.returncode}: "
                           f"{(result.errors or result.output).strip()[:200]}")
    return result.output


def _rocm_roots(env: Mapping[str, str]) -> list[str]:
    roots = [env[k] for k in ("ROCM_PATH", "ROCM_HOME", "HIP_PATH") if env.get(k)]
    return list(dict.fromkeys([*roots, "/opt/rocm"]))


def hip_info(env: Mapping[str, str]) -> dict[str, Any]:
    """`{"version": "6.2.41133-dd7f95766", "source": "hipconfig --version"}` or why there is
    none. A tool that fails or hangs hands over to the next source, and the reason is kept."""
    failures: list[str] = []
    for argv, version_in in ((["hipconfig", "--version"], _first_line),
                             (["hipcc", "--version"], _hipcc_version)):
        try:
            out = tool_output(argv)
        except (RuntimeError, OSError) as exc:
            failures.append(str(exc)[:200])
            continue
        version = version_in(out) if out is not None else None
        if version:
            return {"version": version, "source": " ".join(argv)}
    for root in _rocm_roots(env):
        version = _first_line(read_text(os.path.join(root, ".info", "version"), 256) or "")
        if version and os.path.exists(os.path.join(root, "bin", "hipcc")):
            return {"version": version, "source": f"{root}/.info/version (the ROCm release)"}
    why = ("no hipconfig or hipcc on PATH, and no ROCm installation under "
           + ", ".join(_rocm_roots(env)))
    return {"version": None, "unavailable": "; ".join([*failures, why])}


def _first_line(out: str) -> str | None:
    return out.strip().splitlines()[0] if out.strip() else None


def _hipcc_version(out: str) -> str | None:
    match = re.search(r"HIP version:\s*(\S+)", out)   # "HIP version: 6.2.41133-dd7f95766"
    return match.group(1) if match else None


def hipblaslt_info(env: Mapping[str, str]) -> dict[str, Any]:
    """hipBLASLt's version from its header's version macros, else from the newest library
    file name (`libhipblaslt.so.0.10.60200`, newer than `...so.0.9.60100`)."""
    for root in _rocm_roots(env):
        header = os.path.join(root, "include", "hipblaslt", "hipblaslt-version.h")
        if text := read_text(header):
            # "#define HIPBLASLT_VERSION_MAJOR 0" ... MINOR, PATCH, TWEAK
            parts = [re.search(rf"#define\s+HIPBLASLT_VERSION_{p}\s+(\w+)", text)
                     for p in ("MAJOR", "MINOR", "PATCH")]
            if all(parts):
                return {"version": ".".join(m.group(1) for m in parts if m), "source": header}
        libs = glob.glob(os.path.join(root, "lib", "libhipblaslt.so.*.*"))
        if libs:
            newest = max(libs, key=_library_version_key)
            return {"version": os.path.basename(newest).split(".so.", 1)[1], "source": newest}
    return {"version": None, "unavailable": "no hipBLASLt header or library under "
                                            + ", ".join(_rocm_roots(env))}


def _library_version_key(path: str) -> tuple[tuple[int, int | str], ...]:
    """`libx.so.0.10.60200` -> ((0, 0), (0, 10), (0, 60200)): numeric parts compare as
    numbers (0.10 after 0.9), any other part after them, as text."""
    suffix = os.path.basename(path).split(".so.", 1)[-1]
    return tuple((0, int(part)) if part.isdigit() else (1, part) for part in suffix.split("."))


def container_info(env: Mapping[str, str]) -> dict[str, Any]:
    """The container runtime, image and image id when visible from inside, else `{"runtime":
    None}`, from /.dockerenv, /run/.containerenv, /proc/1/cgroup and platforms' variables."""
    info: dict[str, Any] = {"runtime": None, "image": None, "digest": None, "name": None}
    podman = read_text("/run/.containerenv")
    if podman is not None:
        info["runtime"] = "podman"
        # 'image="quay.io/rocm/pytorch:latest"' / 'imageid="1b2c..."' / 'name="bench"'
        for key, field in (("image", "image"), ("imageid", "digest"), ("name", "name")):
            match = re.search(rf'^{key}="([^"\n]*)"', podman, re.MULTILINE)
            if match and match.group(1):
                info[field] = match.group(1)
    elif os.path.exists("/.dockerenv"):
        info["runtime"] = "docker"
    else:
        cgroup = read_text("/proc/1/cgroup") or ""
        for marker, runtime in (("kubepods", "kubernetes"), ("docker", "docker"),
                                ("containerd", "containerd"), ("lxc", "lxc")):
            if marker in cgroup:
                info["runtime"] = runtime
                break
    for key in ("CONTAINER_IMAGE", "DOCKER_IMAGE", "SINGULARITY_NAME", "APPTAINER_NAME"):
        if env.get(key) and info["image"] is None:
            info["image"] = env[key]
            info["runtime"] = info["runtime"] or ("apptainer" if "TAINER" in key
                                                  or "SINGULARITY" in key else "unknown")
    info["name"] = info["name"] or env.get("CONTAINER_NAME") or None
    info["digest"] = info["digest"] or env.get("CONTAINER_IMAGE_DIGEST") or \
        env.get("IMAGE_DIGEST") or None
    # An image reference may carry a registry password (user:pw@host): scrubbed.
    return {k: PATTERN_ONLY.text(v) if isinstance(v, str) else v for k, v in info.items()}


def python_env_info(env: Mapping[str, str]) -> dict[str, Any]:
    """Which Python environment runs aorta: a venv, a conda environment, or the system's."""
    venv = sys.prefix if sys.prefix != sys.base_prefix else None
    conda = env.get("CONDA_DEFAULT_ENV") or None
    kind = "venv" if venv else "conda" if conda or os.path.isdir(
        os.path.join(sys.prefix, "conda-meta")) else "system"
    return {"kind": kind, "prefix": sys.prefix, "base_prefix": sys.base_prefix,
            "venv": os.path.basename(venv) if venv else None, "conda_env": conda,
            "conda_prefix": env.get("CONDA_PREFIX") or None,
            "virtual_env": env.get("VIRTUAL_ENV") or None}


def read_text(path: str, limit: int = 1 << 16) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read(limit)
    except OSError:
        return None
