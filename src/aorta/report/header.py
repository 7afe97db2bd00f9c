"""The run header: `run.json` (what and when, checked by the store) plus `env.json` (where, with
which software), read defensively: a snapshot from another aorta version, or written by hand,
may lack any key or hold an unexpected type, and the report still says what it can."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aorta.report.model import Gpu, Notice, RunHeader
from aorta.store.records import RunRecord

_NO_TOOL = "no {} tool found on PATH"   # envsnap's reason when a vendor tool is absent


def run_header(run: RunRecord, env: Mapping[str, Any] | None,
               recipe_text: str | None) -> RunHeader:
    env = env or {}
    host = _mapping(env.get("host"))
    gpus, source = env_gpus(env)
    # A rerun of a complete run that ran nothing is a visit, not a resume.
    starts = [h for h in run.history if h.get("trials_to_run") != 0]
    return RunHeader(
        run=run.run or "?", status=run.status, command=list(run.command),
        recipe=run.recipe or None, recipe_sha256=run.recipe_sha256 or None,
        recipe_text=recipe_text, collectors=list(run.collectors),
        trials_per_cell=run.trials_per_cell, created_at=run.created_at or None,
        started_at=run.started_at or None, finished_at=run.finished_at or None,
        starts=max(1, len(starts)), aorta_version=run.aorta_version or None,
        host=_text(host.get("hostname")),
        os=_join(host.get("distro") or host.get("os"), _text(host.get("kernel"), "kernel "),
                 host.get("machine")),
        cpu=_join(host.get("cpu"), _text(host.get("cpu_count"), after=" cores"),
                  _text(host.get("memory_gib"), after=" GiB RAM")),
        gpus=gpus, gpu_source=source, software=_software(run, env),
        env_vars={str(k): str(v) for k, v in _mapping(env.get("env_vars")).items()})


def env_notices(env: Mapping[str, Any] | None) -> list[Notice]:
    """What the snapshot could not read. A missing vendor tool is normal on the other vendor's
    machine, so it is only worth a warning when no GPU at all was recorded."""
    if env is None:
        return [Notice("env", "env.json is missing or unreadable: the machine and software "
                              "this run measured are unknown")]
    reasons = {str(k): str(v) for k, v in _mapping(env.get("partial_reasons")).items()}
    notices = [Notice("env", f"environment snapshot incomplete: {key}: {why}")
               for key, why in reasons.items() if key not in ("nvidia", "amd")]
    broken = [f"{key}: {why}" for key, why in reasons.items()
              if key in ("nvidia", "amd") and why != _NO_TOOL.format(key)]
    notices += [Notice("env", f"GPU query failed: {text}") for text in broken]
    if not env_gpus(env)[0] and not broken:
        notices.append(Notice("env", "no GPU recorded: neither nvidia-smi nor amd-smi/rocm-smi "
                                     "was found when the run started"))
    return notices


def env_gpus(env: Mapping[str, Any]) -> tuple[list[Gpu], str | None]:
    """The GPUs `env.json` recorded, and the tool that listed them."""
    nvidia = env.get("nvidia")
    if isinstance(nvidia, list) and nvidia:
        return [_nvidia_gpu(_mapping(g)) for g in nvidia], "nvidia-smi"
    amd = _mapping(env.get("amd"))
    if amd.get("data") is not None:
        return _amd_gpus(amd["data"]), _text(amd.get("tool")) or "amd"
    return [], None


def _nvidia_gpu(row: Mapping[str, Any]) -> Gpu:
    # env.json row: {"index": "0", "name": "NVIDIA H200", "driver_version": "580.159.04",
    #                "memory.total": "143771", ...}  (nvidia-smi --format=csv,nounits: MiB)
    return Gpu(index=_text(row.get("index")), name=_text(row.get("name")) or "NVIDIA GPU",
               driver=_text(row.get("driver_version")), memory=_mib_text(row.get("memory.total")))


def _amd_gpus(data: Any) -> list[Gpu]:
    """amd-smi `static --json` gives a list of per-GPU objects (`asic.market_name`,
    `driver.version`, `vram.size`), some versions under a `gpu_data` key; rocm-smi
    `--showproductname --json` gives {"card0": {"Card Series": ...}}."""
    if isinstance(data, Mapping) and isinstance(data.get("gpu_data"), list):
        data = data["gpu_data"]
    if isinstance(data, list):
        return [_amd_smi_gpu(i, _mapping(g)) for i, g in enumerate(data)]
    if isinstance(data, Mapping):
        cards = [(k, _mapping(v)) for k, v in data.items() if str(k).startswith("card")]
        return [Gpu(index=k.removeprefix("card"),
                    name=_text(v.get("Card Series") or v.get("Card series")
                               or v.get("Card Model") or v.get("Card model")) or "AMD GPU")
                for k, v in cards]
    return []


def _amd_smi_gpu(position: int, gpu: Mapping[str, Any]) -> Gpu:
    asic, driver = _mapping(gpu.get("asic")), _mapping(gpu.get("driver"))
    size = _mapping(gpu.get("vram")).get("size")
    memory = (_join(size.get("value"), size.get("unit"), sep=" ") if isinstance(size, Mapping)
              else _text(size))     # {"value": 196592, "unit": "MB"}, or a text
    return Gpu(index=_text(gpu.get("gpu", position)),
               name=_text(asic.get("market_name")) or "AMD GPU",
               driver=_text(driver.get("version")), memory=memory)


def _software(run: RunRecord, env: Mapping[str, Any]) -> dict[str, str]:
    raw_packages = env.get("packages")
    packages = _mapping(raw_packages)
    unknown = "unknown" if raw_packages is None else "not installed"
    out = {"python": _text(_mapping(env.get("python")).get("version")) or "unknown",
           "aorta": _text(run.aorta_version or env.get("aorta_version")) or "unknown",
           "torch": _text(packages.get("torch")) or unknown,
           "triton": _text(packages.get("triton") or packages.get("pytorch-triton-rocm"))
           or unknown}
    out |= {str(name): str(version) for name, version in packages.items()
            if name not in ("torch", "triton", "pytorch-triton-rocm") and version}
    for key, name in (("cuda_version", "CUDA"), ("rocm_version", "ROCm")):
        if env.get(key):
            out[name] = str(env[key])
    if "CUDA" not in out and "ROCm" not in out:
        out["CUDA/ROCm"] = "not found"
    return out


def _mib_text(value: Any) -> str | None:
    try:
        mib = float(str(value))
    except ValueError:
        return _text(value)   # "[N/A]" and friends stay as nvidia-smi wrote them
    return f"{mib / 1024:.1f} GiB"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _text(value: Any, before: str = "", after: str = "") -> str | None:
    return None if value is None or value == "" else f"{before}{value}{after}"


def _join(*parts: Any, sep: str = ", ") -> str | None:
    kept = [str(p) for p in parts if p is not None and p != ""]
    return sep.join(kept) if kept else None
