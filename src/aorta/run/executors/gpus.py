"""Which GPUs this machine has, and the variable that pins a process to one of them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from aorta.base.errors import UserError

_KFD_NODES = Path("/sys/class/kfd/kfd/topology/nodes")
_DEVICE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/\-]*")   # 0, GPU-<uuid>, MIG-<uuid>/1/0


def check_device_ids(value: Any) -> Any:
    """The `gpus` option's own check (a validator): `all`, or device ids that could name a
    GPU (an index, or a GPU/MIG UUID), at most 1024 of them, at least one, none twice."""
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or value == "all":
        return value
    if len(items) > 1024:
        raise ValueError("lists more than 1024 devices")
    for item in items:
        text = str(item).strip() if isinstance(item, (str, int)) and not isinstance(
            item, bool) else None
        if text is None or len(text) > 128 or (text and not _DEVICE_ID.fullmatch(text)):
            raise ValueError(f"{str(item)[:40]!r} is not a device id (an index such as 0, "
                             f"or a GPU/MIG UUID), nor 'all'")
    devices = [str(item).strip() for item in items if str(item).strip()]
    if not devices:
        raise ValueError("names no device; give 'all' or a list like 0,1")
    if len(set(devices)) != len(devices):
        raise ValueError("a device is listed twice")
    return value


def pin_variable() -> str:
    """ROCR_VISIBLE_DEVICES where an AMD GPU driver is present (HIP programs and Proton's
    queue-intercepting backends both honour it; Proton rejects HIP_/CUDA_VISIBLE_DEVICES there),
    CUDA_VISIBLE_DEVICES otherwise."""
    return "ROCR_VISIBLE_DEVICES" if os.path.exists("/dev/kfd") else "CUDA_VISIBLE_DEVICES"


def discover_gpus() -> list[str]:
    """GPU indices as the pin variable counts them; empty when none is found."""
    if os.path.exists("/dev/kfd"):
        return _amd_gpus()
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in out.stdout.splitlines() if line.strip().isdigit()] \
        if out.returncode == 0 else []


def _amd_gpus() -> list[str]:
    # ROCR counts GPU agents in topology order; CPU nodes report "simd_count 0".
    count = 0
    try:
        nodes = sorted(_KFD_NODES.iterdir(), key=lambda p: int(p.name))
    except (OSError, ValueError):
        return []
    for node in nodes:
        try:
            props = (node / "properties").read_text()
        except OSError:
            continue
        match = re.search(r"^simd_count\s+(\d+)", props, re.MULTILINE)
        if match and int(match.group(1)) > 0:
            count += 1
    return [str(i) for i in range(count)]


def parse_gpus(value: str | list[str | int]) -> list[str]:
    """`all`, `0,1,3` or a list -> device ids; `UserError` for what `check_device_ids`
    refuses (the recipe's and the flag's values were checked by it already)."""
    try:
        check_device_ids(value)
    except ValueError as exc:
        raise UserError(f"gpus: {exc}") from None
    if isinstance(value, str) and value.strip() == "all":
        found = discover_gpus()
        if not found:
            raise UserError("--gpus all: no GPU found on this machine (nvidia-smi or the AMD "
                            "kfd driver); list devices explicitly or drop --gpus")
        return found
    items = value.split(",") if isinstance(value, str) else value
    return [str(v).strip() for v in items if str(v).strip()]
