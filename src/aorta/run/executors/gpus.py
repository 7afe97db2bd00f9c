"""Which GPUs this machine has, how the `gpus` option names them, and the variable that pins a
process to one of them. A device that is not here is refused before any trial: pinned to a
missing id, a payload sees no GPU, may fall back to the CPU, and would publish CPU numbers."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aorta.base.errors import UserError
from aorta.base.tools import run_tool

_KFD_NODES = Path("/sys/class/kfd/kfd/topology/nodes")
#: An index (no sign, no leading zero, no exponent), a GPU UUID, or a MIG id, new style
#: (MIG-<uuid>) or old (MIG-GPU-<uuid>/<gpu instance>/<compute instance>).
_DEVICE_ID = re.compile(r"0|[1-9][0-9]{0,3}|GPU-[0-9A-Fa-f-]{1,64}"
                        r"|MIG-(GPU-)?[0-9A-Fa-f-]{1,64}(/[0-9]{1,4}/[0-9]{1,4})?")
_MAX_DEVICES = 1024
# nvidia-smi -L:
#   GPU 0: NVIDIA H200 (UUID: GPU-5a4c2c5e-0b1d-8a3e-7f21-3c9d4e5f6a7b)
#     MIG 1g.18gb     Device  0: (UUID: MIG-6e4d0a4b-1c2d-5e6f-8a9b-0c1d2e3f4a5b)
_NV_GPU = re.compile(r"^GPU (\d+): .*\(UUID: (GPU-[^)\s]+)\)")
_NV_MIG = re.compile(r"^\s+MIG .*\(UUID: (MIG-[^)\s]+)\)")


def check_device_ids(value: Any) -> Any:
    """The `gpus` option's own check (a validator): `all` (lower case), or a comma list (or a
    YAML list) of distinct device ids: indices, GPU UUIDs, MIG ids; no spaces, no empty item,
    at most 1024. Whether the devices exist is asked later (`resolve_gpus`)."""
    if value is None or value == "all":
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)          # YAML's `gpus: 0`
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ValueError("give 'all' or device ids such as 0,1")
    if len(items) > _MAX_DEVICES:
        raise ValueError(f"lists more than {_MAX_DEVICES} devices")
    for item in items:
        text = str(item) if isinstance(item, (str, int)) and not isinstance(item, bool) else ""
        if not _DEVICE_ID.fullmatch(text):
            raise ValueError(f"{str(item)[:40]!r} is not a device id: an index (0, 1, ...), "
                             f"a GPU UUID (GPU-...) or a MIG id (MIG-...), comma-separated "
                             f"without spaces, or 'all'")
    if len({str(item) for item in items}) != len(items):
        raise ValueError("a device is listed twice")
    return value


def pin_variable() -> str:
    """ROCR_VISIBLE_DEVICES where an AMD GPU driver is present (HIP programs and Proton's
    queue-intercepting backends both honour it; Proton rejects HIP_/CUDA_VISIBLE_DEVICES there),
    CUDA_VISIBLE_DEVICES otherwise."""
    return "ROCR_VISIBLE_DEVICES" if os.path.exists("/dev/kfd") else "CUDA_VISIBLE_DEVICES"


@dataclass(frozen=True)
class Devices:
    """The GPUs found here: every id that names one (index, UUID, MIG id) -> the GPU it is
    ("GPU 0", or the MIG id itself), in the pin variable's order; or why none was found."""

    source: str                              # how they were listed
    ids: dict[str, str] = field(default_factory=dict)
    problem: str = ""

    def describe(self) -> str:
        names: dict[str, list[str]] = {}
        for name, device in self.ids.items():
            names.setdefault(device, []).append(name)
        return "; ".join(" = ".join(n) for n in names.values())


def nvidia_devices() -> Devices:
    source = "nvidia-smi -L"
    run = run_tool(["nvidia-smi", "-L"], 30)
    if not run.ok:
        why = run.problem or (run.output.strip().splitlines() or [""])[0][:200]
        return Devices(source, problem=f"no /dev/kfd (AMD); {source} (NVIDIA): "
                                       f"{why or f'exit code {run.returncode}'}")
    ids: dict[str, str] = {}
    for line in run.output.splitlines():
        if found := _NV_GPU.match(line):
            ids[found.group(1)] = ids[found.group(2)] = f"GPU {found.group(1)}"
        elif mig := _NV_MIG.match(line):
            ids[mig.group(1)] = mig.group(1)
    return Devices(source, ids, "" if ids else f"no /dev/kfd (AMD); {source} lists no GPU")


def amd_devices(kfd_nodes: Path) -> Devices:
    """GPU agents in topology order (CPU nodes report `simd_count 0`), each by index and, where
    the node has a `unique_id`, by ROCR's UUID `GPU-<16 hex digits>`."""
    source = f"the AMD kfd topology ({kfd_nodes})"
    try:
        nodes = sorted(kfd_nodes.iterdir(), key=lambda p: int(p.name))
    except (OSError, ValueError) as exc:
        return Devices(source, problem=f"/dev/kfd is present, {source} cannot be read: "
                                       f"{exc.strerror if isinstance(exc, OSError) else exc}")
    ids: dict[str, str] = {}
    count = 0
    for node in nodes:
        try:
            props = dict(line.split(None, 1) for line in
                         (node / "properties").read_text().splitlines() if " " in line)
            unique = int(props.get("unique_id", "0"))
        except (OSError, ValueError):
            continue
        if props.get("simd_count", "0").strip() == "0":
            continue
        ids[str(count)] = gpu = f"GPU {count}"
        if unique:
            ids[f"GPU-{unique:016x}"] = gpu
        count += 1
    return Devices(source, ids, "" if ids else f"/dev/kfd is present, {source} lists no GPU")


def resolve_gpus(value: str | list[str | int], devices: Devices | None = None) -> list[str]:
    """The device ids trials are pinned to: `all` -> every GPU's index, else the ids given,
    each checked against the GPUs here. `UserError` naming the devices that exist, or why none
    could be listed, and the fix."""
    shown = value if isinstance(value, str) else ",".join(map(str, value))
    # The AMD GPUs in the order ROCR counts them where /dev/kfd exists, else nvidia-smi's.
    devices = devices or (amd_devices(_KFD_NODES) if os.path.exists("/dev/kfd")
                          else nvidia_devices())
    if devices.problem:
        raise UserError(f"--gpus/executor.gpus {shown}: no GPU found on this host "
                        f"({devices.problem}); run on a GPU host, or drop --gpus to run trials "
                        f"one at a time unpinned")
    if value == "all":
        return [i for i in devices.ids if i.isdigit()]
    asked = shown.split(",")
    missing = [a for a in asked if a not in devices.ids]
    if missing or len({devices.ids[a] for a in asked}) != len(asked):
        what = f"no device {', '.join(missing)} here" if missing else "two ids name one GPU"
        raise UserError(f"--gpus/executor.gpus {shown}: {what}; this host has "
                        f"{devices.describe()} (from {devices.source}); give those ids, or all")
    return asked
