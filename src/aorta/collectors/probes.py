"""Whether each built-in collector can measure on this machine: the probes behind every
`Collector.probe()`, `aorta collectors` and `aorta doctor`.

Each probe returns the fields of a `Capability` (usable, version, reason, fix, details) as a
mapping. This module imports neither pydantic nor subprocess nor shutil, so `aorta collectors`
can answer without them (`aorta.cli.light`); what only a found tool needs (running it for its
version, reading Triton's CLI, NVML) is imported once that tool is found.
"""

from __future__ import annotations

import os
import sys

from aorta.pathsearch import module_spec, which

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, TypeVar

    T = TypeVar("T")

__all__ = ["PROBES", "run_probes", "which", "find_binary", "gpu_present", "gpu_vendor",
           "proton_python_override", "triton_here", "torch_build_at", "TRITON_DISTRIBUTIONS"]

Probe = dict[str, "Any"]

#: Distributions that install the `triton` package: upstream, and PyTorch's own builds.
TRITON_DISTRIBUTIONS = ("triton", "pytorch-triton-rocm", "pytorch-triton")


def find_binary(env_var: str, default: str, env: Mapping[str, str]) -> str | None:
    """`$env_var` (a path, or a name looked up on `env`'s PATH) else `default` on PATH."""
    wanted = env.get(env_var, "").strip() or default
    wanted = os.path.expanduser(wanted)
    if os.sep in wanted:
        return wanted if os.path.isfile(wanted) and os.access(wanted, os.X_OK) else None
    return which(wanted, path=env.get("PATH"))


def gpu_present(timeout_s: float = 20.0) -> tuple[bool, str]:
    """Whether this machine has an NVIDIA GPU, and how we know."""
    if os.path.exists("/dev/nvidiactl"):
        return True, "/dev/nvidiactl exists"
    smi = which("nvidia-smi")
    if smi is None:
        return False, "no /dev/nvidiactl and no nvidia-smi"
    import re

    from aorta.collectors.tool_process import run_tool

    result = run_tool([smi, "-L"], timeout_s)
    if result.ok and re.search(r"^GPU \d+:", result.output, re.MULTILINE):
        return True, "nvidia-smi -L lists a GPU"
    return False, "nvidia-smi -L lists no GPU"


def gpu_vendor(dev: str | os.PathLike[str] = "/dev", path: str | None = None) -> str | None:
    """"amd", "nvidia", "both" or None, from device nodes and `nvidia-smi` on `path`."""
    amd = os.path.exists(os.path.join(dev, "kfd"))
    nvidia = os.path.exists(os.path.join(dev, "nvidiactl")) or \
        which("nvidia-smi", path=path) is not None
    if amd and nvidia:
        return "both"
    return "amd" if amd else "nvidia" if nvidia else None


def proton_python_override(env: Mapping[str, str]) -> str | None:
    """$AORTA_PROTON_PYTHON of the trial's environment, `~` expanded; None when unset or empty."""
    value = env.get("AORTA_PROTON_PYTHON", "")
    return os.path.expanduser(value) if value else None


def triton_here() -> tuple[str | None, str | None, str | None, str]:
    """(version, distribution, package directory, problem) of the Triton this interpreter
    would import; version None when it is not installed."""
    from aorta.dist_versions import NOT_INSTALLED, installed_version

    package_dir = _package_dir("triton")
    for dist in TRITON_DISTRIBUTIONS:
        version = installed_version(dist)
        if version is not NOT_INSTALLED:
            return version if isinstance(version, str) else None, dist, package_dir, ""
    why = "no triton package" if package_dir is None else "triton has no package metadata"
    return None, None, package_dir, why


def _package_dir(name: str) -> str | None:
    """The first search location of top-level package `name` (None: not importable; "" for a
    package without one)."""
    try:
        spec = module_spec(name)
    except ValueError:              # loaded with no spec (a stand-in module)
        return None
    if spec is None:
        return None
    return list(spec.submodule_search_locations or [""])[0] or "."   # as Path("") reads


def torch_build_at(version_py: str | os.PathLike[str], version: str | None) -> str:
    """`cuda 13.0`, `rocm 6.2.41133`, `xpu ...`, `cpu` or `unknown`, read from the installed
    `torch/version.py` (`cuda: Optional[str] = '13.0'`) without importing torch; the
    version's local tag (`+cu130`, `+rocm6.2`, `+cpu`) of distribution version `version` when
    that file cannot be read."""
    values: dict[str, Any] = {}
    try:
        with open(version_py, encoding="utf-8") as fh:
            text = fh.read()
    except (OSError, UnicodeDecodeError):
        text = ""
    for line in text.splitlines():
        key, value = _assignment(line)
        if key is None:
            continue
        try:
            values[key] = _literal(value)
        except (ValueError, SyntaxError):
            continue
    for key, label in (("hip", "rocm"), ("cuda", "cuda"), ("xpu", "xpu")):
        if values.get(key):
            return f"{label} {values[key]}"
    if values:
        return "cpu"
    tag = (version or "").partition("+")[2]
    for prefix, label in (("rocm", "rocm"), ("cu", "cuda"), ("xpu", "xpu"), ("cpu", "cpu")):
        if tag.startswith(prefix):
            return label
    return "unknown"


def _assignment(line: str) -> tuple[str | None, str]:
    """`cuda: Optional[str] = '13.0'` -> ("cuda", "'13.0'"), for cuda, hip and xpu at the
    start of a line, annotated or not; (None, "") for any other line. String methods, not `re`:
    `aorta collectors` starts without it."""
    for key in ("cuda", "hip", "xpu"):
        if line.startswith(key):
            rest = line[len(key):].lstrip()
            if rest.startswith(":"):                    # an annotation, up to the "="
                _, equals, value = rest.partition("=")
                rest = equals + value
            if rest.startswith("=") and rest[1:].strip():
                return key, rest[1:].strip()
    return None, ""


def _literal(text: str) -> object:
    """`ast.literal_eval(text)`, without importing ast for the forms version.py uses."""
    if text == "None":
        return None
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"" and \
            not any(c in text[1:-1] for c in "\\'\""):
        return text[1:-1]
    import ast

    return ast.literal_eval(text)


def _probe(usable: bool, version: str | None = None, reason: str = "", fix: str = "",
           details: Mapping[str, Any] | None = None) -> Probe:
    return {"usable": usable, "version": version, "reason": reason, "fix": fix,
            "details": dict(details or {})}


def cprofile() -> Probe:
    return _probe(True, version=sys.version.split()[0], reason="part of the Python standard library")


def ncu() -> Probe:
    binary = find_binary("NCU_BIN", "ncu", os.environ)
    if binary is None:
        return _probe(False, reason="ncu not found ($NCU_BIN unset and no ncu on PATH)",
                      fix="install Nsight Compute (part of the CUDA toolkit) and put ncu on "
                          "PATH, or set NCU_BIN")
    from aorta.collectors.tool_process import PERMISSION_FIX, host_counter_access, tool_version

    version = tool_version(binary, r"Version\s+(\S+)")
    has_gpu, how = gpu_present()
    details = {"binary": binary, "gpu": how}
    if not has_gpu:
        return _probe(False, version, reason=f"no NVIDIA GPU here ({how})",
                      fix="run on a machine with an NVIDIA GPU", details=details)
    allowed, why = host_counter_access()
    details["counters"] = why
    if allowed is False:
        return _probe(False, version, reason=why, fix=PERMISSION_FIX, details=details)
    return _probe(True, version, reason=why, details=details)


def nsys() -> Probe:
    binary = find_binary("NSYS_BIN", "nsys", os.environ)
    if binary is None:
        return _probe(False, reason="nsys not found ($NSYS_BIN unset and no nsys on PATH)",
                      fix="install Nsight Systems and put nsys on PATH, or set NSYS_BIN")
    from pathlib import Path

    from aorta.collectors.nsys import IMPORTER, IMPORTER_FIX, find_qdstrm_importer
    from aorta.collectors.tool_process import tool_version

    version = tool_version(binary, r"version\s+(\S+)")
    importer = find_qdstrm_importer(Path(binary))
    details: dict[str, Any] = {"binary": binary, "importer": str(importer or "")}
    if importer is None:
        return _probe(False, version, details=details, fix=IMPORTER_FIX,
                      reason=f"nsys at {binary} cannot export: no {IMPORTER} next to it, "
                             "so a capture stays a .qdstrm and never becomes a report")
    has_gpu, how = gpu_present()
    details["gpu"] = how
    if not has_gpu:
        return _probe(False, version, reason=f"no NVIDIA GPU here ({how})",
                      fix="run on a machine with an NVIDIA GPU", details=details)
    return _probe(True, version, details=details,
                  reason="CUDA tracing needs no counter permission")


def rocprof() -> Probe:
    binary = find_binary("ROCPROF_BIN", "rocprofv3", os.environ)
    details = {"binary": binary, "kfd": os.path.exists("/dev/kfd")}
    if binary is None:
        return _probe(False, reason="rocprofv3 not found ($ROCPROF_BIN unset or not "
                      "executable, and no rocprofv3 on PATH)",
                      fix="install ROCm's rocprofiler-sdk, or set ROCPROF_BIN to rocprofv3",
                      details=details)
    from aorta.collectors.rocprof import rocprof_version

    version = rocprof_version(binary)
    if not details["kfd"]:
        return _probe(False, version, reason="no AMD GPU here (/dev/kfd is missing)",
                      fix="run on a host with an AMD GPU and the amdgpu driver; in a container "
                          "pass --device /dev/kfd --device /dev/dri", details=details)
    return _probe(True, version, reason=f"{binary} and /dev/kfd present", details=details)


def proton() -> Probe:
    python = proton_python_override(os.environ)
    if python is None or python == sys.executable:
        version, distribution, package_dir, problem = triton_here()
        python = sys.executable
    else:
        from aorta.collectors.proton_host import find_triton

        found = find_triton(python, os.environ)
        version, distribution, problem = found.version, found.distribution, found.problem
        package_dir = str(found.package_dir) if found.package_dir is not None else None
    if version is None:
        return _probe(False, reason=f"Triton is not installed for {python} ({problem})",
                      fix="install triton (NVIDIA: pip install triton; AMD: the ROCm PyTorch "
                          "wheels bring pytorch-triton-rocm), or set AORTA_PROTON_PYTHON to "
                          "the interpreter that has it")
    if package_dir and not os.path.isdir(os.path.join(package_dir, "profiler")):
        return _probe(False, version,
                      reason=f"Triton {version} has no profiler package "
                             f"(built with TRITON_BUILD_PROTON=OFF?)",
                      fix="install a Triton wheel that ships triton.profiler")
    from pathlib import Path

    from aorta.collectors.proton_backends import backend_table
    from aorta.collectors.proton_host import TritonInstall, cli_backends, resolve_backend

    install = TritonInstall(python, version, distribution,
                            Path(package_dir) if package_dir is not None else None, problem)
    vendor = gpu_vendor()
    backends, source = cli_backends(install)
    if vendor is None:
        return _probe(False, version,
                      reason="no GPU found (no /dev/kfd, /dev/nvidiactl or nvidia-smi)",
                      fix="run on a machine with an AMD or NVIDIA GPU; the cprofile collector "
                          "runs anywhere",
                      details={"backends": backend_table(backends, None, version)})
    auto = resolve_backend("auto", vendor, version)
    return _probe(True, version,
                  reason=f"Triton {version}; CLI backends {', '.join(backends) or 'unknown'}; "
                         f"auto resolves to {auto}",
                  details={"python": python, "distribution": distribution,
                           "package_dir": str(install.package_dir), "vendor": vendor,
                           "cli_backends": list(backends), "backends_from": source,
                           "auto": auto,
                           "backends": backend_table(backends, vendor, version)})


def torch() -> Probe:
    from aorta.dist_versions import installed_root

    found = installed_root("torch")
    if found is None:
        return _probe(False, reason=f"PyTorch is not installed for aorta's Python "
                                    f"({sys.executable})",
                      fix="pip install torch (a CUDA or ROCm build to see GPU kernels)")
    version, root = found
    build = torch_build_at(os.path.join(root, "torch", "version.py"), version)
    vendor = gpu_vendor()
    kernels = (build.startswith("cuda") and vendor in ("nvidia", "both")) or \
        (build.startswith("rocm") and vendor in ("amd", "both"))
    details = {"build": build, "gpu": vendor, "gpu_kernels": kernels}
    if kernels:
        return _probe(True, version, details=details,
                      reason=f"{build} build with a GPU: kernels and CPU operators")
    why = (f"{build} build of torch" if vendor else "no GPU on this machine") + \
        ": only CPU operators are measured (torch_cpu_time_ms)"
    fix = "" if not vendor else ("install a CUDA build of torch" if vendor == "nvidia"
                                 else "install a ROCm build of torch") + \
        " (https://pytorch.org/get-started/locally/) to see GPU kernels"
    return _probe(True, version, reason=why, fix=fix, details=details)


def telemetry() -> Probe:
    from aorta.collectors.telemetry_sources import nvml_device_names, open_source

    listed = nvml_device_names()
    if listed:
        return _probe(True, version="nvidia", details={"devices": ", ".join(listed)})
    try:
        source = open_source(None)
    except RuntimeError as exc:
        return _probe(False, reason=f"no GPU telemetry here ({exc})",
                      fix="pip install nvidia-ml-py (NVIDIA) or amdsmi (AMD), on a machine with "
                          "the GPU driver")
    names = ", ".join(d.name for d in source.devices)
    source.close()
    return _probe(True, version=source.vendor, details={"devices": names})


#: Built-in collector name -> its probe.
PROBES: dict[str, Callable[[], Probe]] = {
    "cprofile": cprofile, "ncu": ncu, "nsys": nsys, "rocprof": rocprof, "proton": proton,
    "torch": torch, "telemetry": telemetry,
}


#: Collectors whose probe asks a profiler binary for its `--version`: its variable and name.
_VERSION_ASKED = {"ncu": ("NCU_BIN", "ncu"), "nsys": ("NSYS_BIN", "nsys"),
                  "rocprof": ("ROCPROF_BIN", "rocprofv3")}


def run_probes(names: Iterable[str], probe: Callable[[str], T]) -> dict[str, T]:
    """`probe(name)` for every name, in the order given. The profilers found answer their
    `--version` meanwhile: they are started first and their probes run last, so their start-up
    overlaps the other probes' (NVML's initialisation, reading Triton)."""
    names = list(names)
    binaries = [found for name, (variable, default) in _VERSION_ASKED.items() if name in names
                and (found := find_binary(variable, default, os.environ)) is not None]
    if not binaries:
        return {name: probe(name) for name in names}
    from aorta.collectors.tool_process import start_versions

    with start_versions(binaries):
        answers = {name: probe(name) for name in sorted(names, key=_VERSION_ASKED.__contains__)}
    return {name: answers[name] for name in names}
