"""What this machine says about Proton, read without importing triton or torch.

- `find_triton`: the installed Triton (version from package metadata, its package directory);
- `cli_backends`: the `-b` choices of that Triton's CLI, read from its source text (`ast`), from
  `libproton.get_available_profilers()` in a short child process (Triton >= 3.8, where the
  choices are computed), else from the version table below;
- `gpu_vendor`: AMD or NVIDIA from the device nodes (`/dev/kfd`, `/dev/nvidiactl`, `nvidia-smi`);
- `resolve_backend`: what `backend: auto` becomes (Proton's `_select_backend()`);
- `translate_devices`: HIP/CUDA_VISIBLE_DEVICES -> ROCR_VISIBLE_DEVICES for the AMD backends.

Version facts: the published `triton` wheels 3.0-3.9, `triton/profiler/proton.py` and `profile.py`.
"""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from aorta.collectors.proton.backends import QUEUE_INTERCEPTING

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

# Run by `find_triton` in another interpreter: the same lookup, printed as JSON.
_CHILD_LOOKUP = """
import importlib.metadata as m, importlib.util as u, json
spec = u.find_spec("triton")
found = {"dir": list(spec.submodule_search_locations or [None])[0] if spec else None}
for dist in %r:
    try:
        found.update(version=m.version(dist), dist=dist); break
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
    """The Triton of `python` (None: this interpreter, looked up in process)."""
    if python is None or python == sys.executable:
        return _find_here()
    search_path = (env or {}).get("PYTHONPATH", "")
    return _find_in_child(python, search_path, dict(env) if env is not None else None)


def proton_python_override(env: Mapping[str, str]) -> str | None:
    """$AORTA_PROTON_PYTHON of the trial's environment, `~` expanded; None when unset or empty."""
    value = env.get("AORTA_PROTON_PYTHON", "")
    return os.path.expanduser(value) if value else None


@cache
def _find_here() -> TritonInstall:
    """The lookup of `_CHILD_LOOKUP`, in this interpreter."""
    try:
        spec = importlib.util.find_spec("triton")
    except ValueError:              # loaded with no spec (a stand-in module)
        spec = None
    package_dir = Path(list(spec.submodule_search_locations or ["."])[0]) if spec else None
    for dist in TRITON_DISTRIBUTIONS:
        try:
            version = importlib.metadata.distribution(dist).metadata.json.get("version")
        except importlib.metadata.PackageNotFoundError:
            continue
        return TritonInstall(sys.executable, version if isinstance(version, str) else None,
                             dist, package_dir)
    why = "no triton package" if package_dir is None else "triton has no package metadata"
    return TritonInstall(sys.executable, package_dir=package_dir, problem=why)


_child_cache: dict[tuple[str, str], TritonInstall] = {}


def _find_in_child(python: str, search_path: str, env: dict[str, str] | None) -> TritonInstall:
    key = (python, search_path)
    if key not in _child_cache:
        _child_cache[key] = _ask_child(python, env)
    return _child_cache[key]


def _ask_child(python: str, env: dict[str, str] | None) -> TritonInstall:
    code = _CHILD_LOOKUP % (TRITON_DISTRIBUTIONS,)
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True,
                              timeout=CHILD_TIMEOUT_S, env=env, check=False)
        found = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else {}
    except (OSError, subprocess.TimeoutExpired, ValueError, IndexError) as exc:
        return TritonInstall(python, problem=f"cannot ask {python} ({type(exc).__name__}: {exc})")
    if not found:
        return TritonInstall(python, problem=f"{python} exited {done.returncode}: "
                                             f"{done.stderr.strip()[-200:]}")
    package_dir = Path(found["dir"]) if found.get("dir") else None
    if not found.get("version"):
        return TritonInstall(python, package_dir=package_dir, problem="no triton package")
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
        listed = available_profilers(install.python)
        if listed:
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
    code = ("from triton._C.libproton import proton as p; "
            "print(','.join(p.get_available_profilers()))")
    try:
        done = subprocess.run([python, "-c", code], capture_output=True, text=True,
                              timeout=CHILD_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return ()
    return tuple(name.strip() for name in lines[-1].split(",") if name.strip())


def torch_build_vendor() -> str | None:
    """"amd" or "nvidia" from the installed torch's local version tag (`+rocm6.2`, `+cu130`)."""
    import importlib.metadata

    try:
        tag = importlib.metadata.version("torch").partition("+")[2]
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
    release = version_tuple(version)
    if release is None:
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
    """Proton's AMD backends refuse HIP_/CUDA_VISIBLE_DEVICES: move the pin to ROCR_.

    Only for the queue-intercepting backends (auto, rocprofiler, roctracer). A variable counts as
    set even when empty (empty hides every GPU). ROCR_VISIBLE_DEVICES already set wins; else
    HIP's value; else CUDA's. Under `auto`, CUDA_VISIBLE_DEVICES alone is an NVIDIA pin and is
    left alone; it moves only when HIP_ or ROCR_VISIBLE_DEVICES says the machine is AMD.
    """
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
    value = hip if hip is not None else cuda
    assert value is not None
    source = HIP if hip is not None else CUDA
    done = f"set {ROCR}={value!r} from {source}"
    return DeviceVars({ROCR: value}, frozenset(drop), _note(backend, moved, done))


def _note(backend: str, moved: str, done: str) -> str:
    return (f"aorta: Proton's {backend} backend refuses HIP_/CUDA_VISIBLE_DEVICES on AMD GPUs; "
            f"unset {moved} and {done}")
