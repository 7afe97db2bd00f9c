"""What this machine says about Proton, read without importing triton or torch: the installed
Triton (`find_triton`), its CLI's `-b` choices (`cli_backends`), which backends can measure here
(`backend_table`, for `aorta doctor`), what `backend: auto` becomes (`resolve_backend`) and the
AMD device-variable move (`translate_devices`).

Version facts: the published `triton` wheels 3.0-3.9, `triton/profiler/proton.py` and `profile.py`.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from aorta.base.tools import run_tool
from aorta.base.version import dist_version

#: Backends that install an HSA queue interceptor on AMD (`auto` resolves to one of them there).
QUEUE_INTERCEPTING = frozenset({"auto", "rocprofiler", "roctracer"})
#: Backends that subscribe to CUPTI on NVIDIA (`auto` resolves to cupti there).
CUPTI_BACKENDS = frozenset({"auto", "cupti"})
#: Every backend aorta knows but `auto`, and the GPUs it measures.
_VENDOR = {"cupti": ("nvidia",), "roctracer": ("amd",), "rocprofiler": ("amd",),
           "instrumentation": ("nvidia", "amd")}
_VENDOR_NAMES = {"nvidia": "an NVIDIA GPU", "amd": "an AMD GPU"}

#: Distributions that install the `triton` package: upstream, and PyTorch's own builds.
TRITON_DISTRIBUTIONS = ("triton", "pytorch-triton-rocm", "pytorch-triton")
CHILD_TIMEOUT_S = 60
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")
AUTO_UNRESOLVED_NO_GPU = "auto (unresolved: no GPU found)"

# (first minor, CLI -b choices) from the wheels; the last row holds from 3.8 on.
_CLI_BACKENDS_BY_VERSION: tuple[tuple[tuple[int, int], tuple[str, ...]], ...] = (
    ((3, 0), ("cupti",)),
    ((3, 2), ("cupti", "cupti_pcsampling", "roctracer")),
    ((3, 5), ("cupti", "roctracer", "instrumentation")),
    ((3, 8), ("cupti", "roctracer", "rocprofiler", "instrumentation")),
)

# Run by `find_triton` in the interpreter asked: where `triton` is, and its distribution.
_CHILD_LOOKUP = """
import importlib.metadata as m, importlib.util as u, json
spec = u.find_spec("triton")
found = {"dir": list(spec.submodule_search_locations or [None])[0] if spec else None}
for dist in %r:
    try:
        found.update(version=m.metadata(dist).get("Version"), dist=dist); break
    except m.PackageNotFoundError:
        pass
print(json.dumps(found))
"""


@dataclass(frozen=True)
class TritonInstall:
    """The Triton an interpreter would import. `version` None: not installed (or unreadable)."""

    python: str
    version: str | None = None
    distribution: str | None = None
    package_dir: Path | None = None
    problem: str = ""

    @property
    def release(self) -> tuple[int, int] | None:
        return version_tuple(self.version)


def version_tuple(version: str | None) -> tuple[int, int] | None:
    """`"3.6.0"`, `"3.2.0+git1a2b"` -> (3, 6), (3, 2); None when unreadable."""
    match = _VERSION.match(version or "")
    return (int(match.group(1)), int(match.group(2))) if match else None


def find_triton(python: str | None = None, env: Mapping[str, str] | None = None) -> TritonInstall:
    """The Triton that `python` (None: this interpreter) imports in `env` (None: this process's
    environment), asked in a child process; cached per interpreter and PYTHONPATH."""
    python = python or sys.executable
    key = (python, (os.environ if env is None else env).get("PYTHONPATH", ""))
    if key not in _found:
        _found[key] = _ask_child(python, dict(env) if env is not None else None)
    return _found[key]


_found: dict[tuple[str, str], TritonInstall] = {}


def proton_python_override(env: Mapping[str, str]) -> str | None:
    """$AORTA_PROTON_PYTHON of the trial's environment, `~` expanded; None when unset or empty."""
    value = env.get("AORTA_PROTON_PYTHON", "")
    return os.path.expanduser(value) if value else None


def _ask_child(python: str, env: dict[str, str] | None) -> TritonInstall:
    answer, problem = _child_answer(python, _CHILD_LOOKUP % (TRITON_DISTRIBUTIONS,), env)
    try:
        found = json.loads(answer)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        return TritonInstall(python, problem=f"cannot ask {python} ({problem or 'no answer'})")
    package_dir = Path(found["dir"]) if found.get("dir") else None
    if not found.get("version"):
        why = "no triton package" if package_dir is None else "triton has no package metadata"
        return TritonInstall(python, package_dir=package_dir, problem=why)
    return TritonInstall(python, found["version"], found.get("dist"), package_dir)


def cli_backends(install: TritonInstall) -> tuple[tuple[str, ...], str]:
    """(the `-b` choices of that Triton's CLI, where they came from)."""
    if install.package_dir is not None:
        source = install.package_dir / "profiler" / "proton.py"
        try:
            choices = argparse_choices(source.read_text(encoding="utf-8"), "--backend")
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            choices = None
        if choices:
            return choices, f"argparse choices in {source}"
    release = install.release
    if release is not None and release >= (3, 8):
        if listed := available_profilers(install.python):
            return listed, "libproton.get_available_profilers()"
    if release is None:
        return (), "unknown (Triton version unreadable)"
    table = [names for first, names in _CLI_BACKENDS_BY_VERSION if release >= first]
    return (table[-1] if table else ()), f"version table for Triton {install.version}"


def argparse_choices(source: str, flag: str) -> tuple[str, ...] | None:
    """The literal `choices=[...]` of the `add_argument` call that declares `flag`.

        parser.add_argument("-b", "--backend", type=str, ..., choices=["cupti", "roctracer"])

    None when there is no such call or the choices are computed (Triton >= 3.8).
    """
    for node in ast.walk(ast.parse(source)):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr == "add_argument"):
            continue
        if not any(isinstance(a, ast.Constant) and a.value == flag for a in node.args):
            continue
        for keyword in node.keywords:
            if keyword.arg == "choices" and isinstance(keyword.value, (ast.List, ast.Tuple)):
                return tuple(e.value for e in keyword.value.elts
                             if isinstance(e, ast.Constant) and isinstance(e.value, str))
        return None
    return None


@cache
def available_profilers(python: str) -> tuple[str, ...]:
    """`libproton.get_available_profilers()` of `python`'s Triton (>= 3.8); () on any failure."""
    answer, _ = _child_answer(python, "from triton._C.libproton import proton as p; "
                                      "print(','.join(p.get_available_profilers()))")
    return tuple(name.strip() for name in answer.split(",") if name.strip())


def _child_answer(python: str, code: str, env: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(the last line `python -c code` printed, '' unless it exited 0; why there is none)."""
    done = run_tool([python, "-c", code], CHILD_TIMEOUT_S, env=env, merge_stderr=False)
    lines = done.output.strip().splitlines()
    if done.ok and lines:
        return lines[-1], ""
    return "", done.problem or f"exited {done.returncode}: {done.errors.strip()[-200:]}"


def backend_table(offered: Sequence[str], vendor: str | None, triton: str | None
                  ) -> dict[str, dict[str, Any]]:
    """backend -> {usable, reason, fix} for every backend aorta knows (`auto` aside)."""
    table: dict[str, dict[str, Any]] = {}
    here = {"nvidia", "amd"} if vendor == "both" else {vendor} if vendor else set()
    for backend, needs in _VENDOR.items():
        if offered and backend not in offered:
            row = (False, f"Triton {triton}'s CLI does not offer it (it offers "
                          f"{', '.join(offered)})",
                   "install a Triton that has it, or use another backend")
        elif not here & set(needs):
            row = (False, f"needs {' or '.join(_VENDOR_NAMES[v] for v in needs)}",
                   "run on a machine with that GPU")
        else:
            row = (True, "offered by Triton and the GPU matches" if offered
                   else "the GPU matches (Triton's offer unknown)", "")
        table[backend] = dict(zip(("usable", "reason", "fix"), row))
    return table


def torch_build_vendor() -> str | None:
    """"amd" or "nvidia" from the installed torch's local version tag (`+rocm6.2`, `+cu130`)."""
    try:
        tag = (dist_version(importlib.metadata.distribution("torch")) or "").partition("+")[2]
    except importlib.metadata.PackageNotFoundError:
        return None
    return "amd" if tag.startswith("rocm") else "nvidia" if tag.startswith("cu") else None


def resolve_backend(requested: str, vendor: str | None, version: str | None) -> str:
    """What Proton runs for `requested`: explicit backends as is; `auto` as `_select_backend()`
    picks it (cupti on NVIDIA; roctracer below Triton 3.8 and rocprofiler from 3.8 on AMD)."""
    if requested != "auto":
        return requested
    if vendor == "both":
        vendor = torch_build_vendor() or "both"
    if vendor is None:
        return AUTO_UNRESOLVED_NO_GPU
    if vendor == "both":
        return "auto (unresolved: both AMD and NVIDIA devices found)"
    if vendor == "nvidia":
        return "cupti"
    if (release := version_tuple(version)) is None:
        return ("auto (unresolved: Triton version unknown; roctracer below 3.8, "
                "rocprofiler from 3.8)")
    return "rocprofiler" if release >= (3, 8) else "roctracer"


@dataclass(frozen=True)
class DeviceVars:
    """Changes to the child's device variables, and the warning that explains them."""

    set: dict[str, str] = field(default_factory=dict)
    unset: frozenset[str] = frozenset()
    note: str = ""


HIP, CUDA, ROCR = "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"


def translate_devices(backend: str, env: Mapping[str, str]) -> DeviceVars:
    """Proton's AMD backends refuse HIP_/CUDA_VISIBLE_DEVICES: move the pin to ROCR_. Set but
    empty counts as set (it hides every GPU). Under `auto` CUDA_VISIBLE_DEVICES alone is an
    NVIDIA pin, left alone. The rule: docs/collectors/proton.md, "Device variables on AMD"."""
    if backend not in QUEUE_INTERCEPTING:
        return DeviceVars()
    hip, cuda, rocr = env.get(HIP), env.get(CUDA), env.get(ROCR)
    drop = [HIP] if hip is not None else []
    if cuda is not None and (backend != "auto" or hip is not None or rocr is not None):
        drop.append(CUDA)
    if not drop:
        return DeviceVars()
    moved = " and ".join(f"{name}={env[name]!r}" for name in drop)
    if rocr is not None:
        kept = f"kept {ROCR}={rocr!r}, which wins"
        return DeviceVars({}, frozenset(drop), _note(backend, moved, kept))
    source = HIP if hip is not None else CUDA      # one is set, or nothing would be dropped
    done = f"set {ROCR}={env[source]!r} from {source}"
    return DeviceVars({ROCR: env[source]}, frozenset(drop), _note(backend, moved, done))


def _note(backend: str, moved: str, done: str) -> str:
    return (f"aorta: Proton's {backend} backend refuses HIP_/CUDA_VISIBLE_DEVICES on AMD GPUs; "
            f"unset {moved} and {done}")
