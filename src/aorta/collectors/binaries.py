"""Finding profiler binaries (ncu, nsys, rocprofv3) and GPUs on this host, and asking a tool
for its version. Tools run through `aorta.base.tools.run_tool`: no shell, a session of their
own, a timeout, and nothing left running after the call."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path

from aorta.base.errors import SetupError
from aorta.base.tools import run_tool
from aorta.store.reading import read_tail as _read_tail


def find_binary(env_var: str, default: str, env: Mapping[str, str]) -> str | None:
    """`$env_var` (a path, or a name looked up on `env`'s PATH) else `default` on PATH."""
    wanted = os.path.expanduser(env.get(env_var, "").strip() or default)
    if os.sep in wanted:
        return wanted if os.path.isfile(wanted) and os.access(wanted, os.X_OK) else None
    return shutil.which(wanted, path=env.get("PATH"))


def resolve_binary(env_var: str, default: str, env: Mapping[str, str], collector: str,
                   error: type[SetupError] = SetupError) -> str:
    """The profiler binary for a trial, or `error` naming both ways to provide one."""
    if found := find_binary(env_var, default, env):
        return found
    given = env.get(env_var, "").strip()
    problem = (f"${env_var}={given!r} is not an executable file on this machine" if given
               else f"${env_var} is not set and {default!r} is not on PATH")
    raise error(f"{collector}: {problem}; set {env_var} to the {default} binary or put {default} "
                f"on PATH, or remove {collector} from collect")


def tool_version(binary: str, pattern: str, timeout_s: float = 30.0) -> str | None:
    """The version a `<binary> --version` prints, matched by `pattern`'s first group."""
    result = run_tool([binary, "--version"], timeout_s)
    match = re.search(pattern, result.output) if result.ok else None
    return match.group(1) if match else None


def read_tail(path: Path | None, limit: int = 65536) -> str:
    """The last `limit` bytes of a text file, decoded; '' when it cannot be read."""
    return _read_tail(path, limit) or ""


def gpu_present(timeout_s: float = 20.0) -> tuple[bool, str]:
    """Whether this machine has an NVIDIA GPU, and how we know."""
    if os.path.exists("/dev/nvidiactl"):
        return True, "/dev/nvidiactl exists"
    if (smi := shutil.which("nvidia-smi")) is None:
        return False, "no /dev/nvidiactl and no nvidia-smi"
    result = run_tool([smi, "-L"], timeout_s)
    if result.ok and re.search(r"^GPU \d+:", result.output, re.MULTILINE):
        return True, "nvidia-smi -L lists a GPU"
    return False, "nvidia-smi -L lists no GPU"


def gpu_vendor(dev: str | os.PathLike[str] = "/dev", path: str | None = None) -> str | None:
    """"amd", "nvidia", "both" or None, from device nodes and `nvidia-smi` on `path`."""
    amd = os.path.exists(os.path.join(dev, "kfd"))
    nvidia = os.path.exists(os.path.join(dev, "nvidiactl")) or \
        shutil.which("nvidia-smi", path=path) is not None
    if amd and nvidia:
        return "both"
    return "amd" if amd else "nvidia" if nvidia else None
