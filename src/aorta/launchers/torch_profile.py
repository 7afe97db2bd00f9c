"""`python -m aorta.launchers.torch_profile`: run a script (or pytest) under torch.profiler.
Writes trace.json, kernels.txt and summary.json into `--out` even when the payload fails, then
ends as the payload ended; exit 2 means the payload never ran. `profiler_from_env()` serves
payloads that run the profiler themselves (`mode: env`). Details: docs/collectors/torch.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from aorta.launchers.as_main import parse_target, run_then, script_problem
from aorta.launchers.attach import say_not_attached

ENV_PREFIX = "AORTA_TORCH_"
SUMMARY_VERSION = 1
EXIT_NOT_RUN = 2          # what `python missing.py` returns too
GPU_NAMES = ("gpu", "cuda", "hip", "xpu")


class LauncherError(Exception):
    """The payload cannot be run under the profiler as asked; it is not run at all."""


class AttachError(LauncherError):
    """The profiler itself cannot run here (torch not importable, an activity the build
    lacks): the trial is an error of measurement, not a failure of the payload."""


def _parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="python -m aorta.launchers.torch_profile")
    parser.add_argument("--out", required=True, help="directory for trace.json and friends")
    parser.add_argument("--activities", default="cpu,gpu",
                        help="comma-separated: cpu, gpu (whatever GPU the build has), cuda, hip, xpu")
    parser.add_argument("--record-shapes", action="store_true")
    parser.add_argument("--with-stack", action="store_true")
    parser.add_argument("--profile-memory", action="store_true")
    parser.add_argument("--row-limit", type=int, default=50, help="rows of kernels.txt")
    return parse_target(parser, argv)


def _gpu_build(torch: Any) -> str | None:
    names = ("hip", "cuda", "xpu")
    return next((name for name in names if getattr(torch.version, name, None)), None)


def resolve_activities(names: list[str], torch: Any) -> tuple[list[Any], list[str], list[str]]:
    """(activities, names used, notes). `gpu` is left out with a note when there is none; an
    explicit `cuda`/`hip`/`xpu` the build lacks raises `LauncherError`. ROCm builds record HIP
    kernels through `ProfilerActivity.CUDA`."""
    kinds = torch.profiler.ProfilerActivity
    supported = set(torch.profiler.supported_activities())
    build = _gpu_build(torch)
    by_build = {"cuda": kinds.CUDA, "hip": kinds.CUDA, "xpu": getattr(kinds, "XPU", None)}
    activities: list[Any] = []
    used: list[str] = []
    notes: list[str] = []
    for name in names:
        if name == "cpu":
            activities.append(kinds.CPU)
            used.append("cpu")
            continue
        if name not in GPU_NAMES:
            raise LauncherError(f"unknown activity {name!r}; allowed: cpu, {', '.join(GPU_NAMES)}")
        wanted = build if name == "gpu" else name
        activity = by_build.get(wanted or "")
        problem = _gpu_problem(name, wanted, build, activity in supported, torch.__version__)
        if problem and name == "gpu":
            notes.append(problem)
            continue
        if problem:
            raise LauncherError(problem)
        activities.append(activity)
        used.append(wanted or name)
    if not activities:
        raise LauncherError("no activity left to profile: " + "; ".join(notes))
    return activities, used, notes


def _gpu_problem(name: str, wanted: str | None, build: str | None, supported: bool,
                 version: str) -> str:
    if wanted is None:
        return f"GPU activity left out: torch {version} is a CPU-only build"
    if wanted != build:
        return (f"activity {name!r} needs a {name} build of torch, this is {version} "
                f"({build or 'CPU only'}); ask for 'gpu' to take whatever GPU the build drives")
    if not supported:
        return (f"activity {name!r}: torch {version} sees no {wanted} device "
                f"(check the driver and *_VISIBLE_DEVICES)")
    return ""


def _atomic(path: Path, write: Callable[[Path], object]) -> None:
    """`write(<path>.partial)`, then the rename: a reader never sees half a file."""
    partial = path.with_name(path.name + ".partial")
    write(partial)
    os.replace(partial, path)


def _write_text(path: Path, text: str) -> None:
    _atomic(path, lambda partial: partial.write_text(text, encoding="utf-8"))


def _write_summary(out: Path, summary: dict[str, Any]) -> None:
    try:
        _write_text(out / "summary.json", json.dumps(summary, indent=2, default=str) + "\n")
    except OSError as exc:
        print(f"aorta: torch profiler: could not write summary.json: {exc}", file=sys.stderr)


def _export(profiler: Any, out: Path, row_limit: int, on_gpu: bool) -> list[str]:
    """Write trace.json and kernels.txt; return what failed (never raise)."""
    errors = []
    try:
        _atomic(out / "trace.json", lambda partial: profiler.export_chrome_trace(str(partial)))
    except Exception as exc:  # noqa: BLE001 - the payload's own outcome must survive
        errors.append(f"could not write trace.json: {type(exc).__name__}: {exc}")
    try:
        _write_text(out / "kernels.txt", _kernel_table(profiler, row_limit, on_gpu) + "\n")
    except Exception as exc:  # noqa: BLE001
        errors.append(f"could not write kernels.txt: {type(exc).__name__}: {exc}")
    return errors


def _kernel_table(profiler: Any, row_limit: int, on_gpu: bool) -> str:
    averages = profiler.key_averages()
    if not on_gpu:
        return str(averages.table(sort_by="self_cpu_time_total", row_limit=row_limit))
    try:
        return str(averages.table(sort_by="self_device_time_total", row_limit=row_limit))
    except AttributeError:   # torch before 2.4 names it after CUDA
        return str(averages.table(sort_by="self_cuda_time_total", row_limit=row_limit))


def _device(torch: Any) -> str | None:
    """The GPU the payload used; only asked once the payload initialised it (asking earlier
    would initialise CUDA before the payload could pick its devices)."""
    try:
        if torch.cuda.is_initialized():
            return str(torch.cuda.get_device_name(torch.cuda.current_device()))
    except Exception:  # noqa: BLE001 - a broken device query must not hide the trace
        return None
    return None


def _prepare(opts: argparse.Namespace, target: list[str],
             summary: dict[str, Any]) -> tuple[Any, Any]:
    """Import torch and build the profiler; `LauncherError` when the payload cannot run."""
    try:
        import torch
    except ImportError as exc:
        raise AttachError(f"torch is not importable by {sys.executable}: {exc}") from None
    names = [n.strip() for n in opts.activities.split(",") if n.strip()]
    try:
        activities, used, notes = resolve_activities(names, torch)
    except LauncherError as exc:
        raise AttachError(str(exc)) from None
    summary.update(torch_version=torch.__version__, build=_gpu_build(torch) or "cpu",
                   activities=used, notes=notes)
    problem = None if opts.pytest else script_problem(target[0])
    if problem:
        raise LauncherError(problem)
    return torch, torch.profiler.profile(
        activities=activities, record_shapes=opts.record_shapes, with_stack=opts.with_stack,
        profile_memory=opts.profile_memory)


def main(argv: list[str] | None = None) -> None:
    """Run the target under the profiler; ends the way the target ends (see the module doc)."""
    opts, target = _parse_args(sys.argv[1:] if argv is None else argv)
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    summary: dict[str, Any] = {"schema_version": SUMMARY_VERSION, "python": sys.executable,
                               "requested": opts.activities, "target": "pytest" if opts.pytest
                               else target[0], "errors": []}
    try:
        torch, profiler = _prepare(opts, target, summary)
    except LauncherError as exc:
        summary["error"] = str(exc)
        _write_summary(out, summary)
        if isinstance(exc, AttachError):
            say_not_attached("torch", str(exc))
        else:
            print(f"aorta: torch profiler: {exc}", file=sys.stderr)
        raise SystemExit(EXIT_NOT_RUN) from None
    profiler.start()
    run_then(target, opts.pytest, lambda: _finish(torch, profiler, out, opts, summary), __file__)


def _finish(torch: Any, profiler: Any, out: Path, opts: argparse.Namespace,
            summary: dict[str, Any]) -> None:
    errors: list[str] = summary["errors"]
    if not _session_alive(torch):
        # The payload ran a torch.profiler of its own, which ended ours; exporting a session
        # that is gone crashes the process (SIGSEGV in torch 2.13) and would eat the exit status.
        errors.append("the payload ran its own torch.profiler session, which ended the "
                      "launcher's; use mode: env for payloads that profile themselves")
    else:
        try:
            profiler.stop()
        except Exception as exc:  # noqa: BLE001
            errors.append(f"stopping the profiler failed: {type(exc).__name__}: {exc}")
        else:
            errors += _export(profiler, out, opts.row_limit, summary["activities"] != ["cpu"])
    summary["device"] = _device(torch)
    for error in errors:
        print(f"aorta: torch profiler: {error}", file=sys.stderr)
    _write_summary(out, summary)


def _session_alive(torch: Any) -> bool:
    try:
        return bool(torch._C._autograd._profiler_enabled())
    except AttributeError:      # a torch without this query: assume the session is ours
        return True


def _flag(environ: Mapping[str, str], key: str) -> bool:
    return environ.get(ENV_PREFIX + key, "0").strip().lower() in ("1", "true", "yes", "on")


def _schedule(text: str) -> dict[str, int]:
    """`wait=1,warmup=1,active=3,repeat=1` -> keyword arguments of `torch.profiler.schedule`."""
    parts = dict(item.split("=", 1) for item in text.split(",") if "=" in item)
    return {key: int(value) for key, value in parts.items()}


def profiler_from_env(environ: Mapping[str, str] | None = None) -> Any:
    """A `torch.profiler.profile` from the `AORTA_TORCH_*` variables, or None outside aorta.
    Raises `LauncherError` for an activity the build lacks; see docs/collectors/torch.md."""
    environ = os.environ if environ is None else environ
    trace = environ.get(ENV_PREFIX + "TRACE")
    if not environ.get(ENV_PREFIX + "DIR") or not trace:
        return None
    import torch

    names = [n.strip() for n in environ.get(ENV_PREFIX + "ACTIVITIES", "cpu,gpu").split(",")]
    activities, _, notes = resolve_activities([n for n in names if n], torch)
    for note in notes:
        print(f"aorta: torch profiler: {note}", file=sys.stderr)
    schedule = environ.get(ENV_PREFIX + "SCHEDULE")
    return torch.profiler.profile(
        activities=activities, record_shapes=_flag(environ, "RECORD_SHAPES"),
        with_stack=_flag(environ, "WITH_STACK"), profile_memory=_flag(environ, "PROFILE_MEMORY"),
        schedule=torch.profiler.schedule(**_schedule(schedule)) if schedule else None,
        on_trace_ready=_TraceWriter(Path(trace)))


class _TraceWriter:
    """`on_trace_ready` that numbers the recordings after the first."""

    def __init__(self, first: Path) -> None:
        self.first = first
        self.count = 0

    def __call__(self, profiler: Any) -> None:
        self.count += 1
        path = self.first if self.count == 1 else \
            self.first.with_name(f"{self.first.stem}.{self.count}{self.first.suffix}")
        _atomic(path, lambda partial: profiler.export_chrome_trace(str(partial)))


if __name__ == "__main__":
    main()
