"""`proton`: Triton's profiler, attached to a Python payload.

`mode: cli` runs the unmodified script (or pytest) through `python -m aorta.launchers.proton_run`,
which writes the capture however the script ends; `$AORTA_PROTON_PYTHON` replaces the
interpreter. `mode: env` hands the payload `AORTA_PROTON_*` and it calls `proton.start()` and
`proton.finalize()` itself. Metrics: the common scheme, `proton_scope_cycles`, and from `resolved`
`proton_backend` and notes. Options, states and reasons: docs/collectors/proton.md.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from aorta.base.errors import SetupError
from aorta.collectors.artifact_dir import list_artifact_dir
from aorta.collectors.attach_failure import with_attach_failure
from aorta.collectors.base import (INSTALL_FIX, Capability, Collector, Launch, Metrics,
                                   TrialContext, TrialOutcome, capture_status,
                                   importable_by_child, settle)
from aorta.collectors.binaries import gpu_vendor
from aorta.collectors.proton.host import (CUPTI_BACKENDS, QUEUE_INTERCEPTING, TritonInstall,
                                          backend_table, cli_backends, find_triton,
                                          proton_python_override, resolve_backend,
                                          translate_devices)
from aorta.collectors.proton.options import ProtonOptions, cli_pin_problem, mode_argument
from aorta.collectors.proton.reasons import empty_reason, missing_reason
from aorta.collectors.python_launch import split_python_launch
from aorta.collectors.ranks import rank_name, rank_of, summarize_ranks
from aorta.parsers.chrome_trace import KERNEL_CATEGORIES, read_events
from aorta.parsers.hatchet import METADATA_FRAME, HatchetSummary
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.skips import Skips

PROFILE_BASENAME = "proton"
LAUNCHER = "aorta.launchers.proton_run"
ENV_PREFIX = "AORTA_PROTON_"
ESCAPE = ("use mode: env instead (argv stays as it is; the payload calls "
          "proton.start(os.environ['AORTA_PROTON_NAME'], ...) and proton.finalize() itself)")
SUFFIXES = {"tree": ".hatchet", "trace": ".chrome_trace"}
_AUTO_TEXT = "auto, which resolves to rocprofiler or roctracer on AMD and cupti on NVIDIA"
_WITHHELD = "totals are withheld rather than undercounted"


class ProtonWrapError(SetupError):
    """Proton cannot attach to this launch; the message names `mode: env` as the way out."""


class ProtonCollector(Collector[ProtonOptions]):
    name = "proton"
    wrap_rank = 70
    options_model = ProtonOptions
    per_process = True
    summary = "Triton's Proton: GPU time and launches per kernel of a Python/Triton payload"

    def describe(self, options: ProtonOptions) -> str:
        backend = _AUTO_TEXT if options.backend == "auto" else options.backend
        return f"proton (backend: {backend})"

    def claims(self, options: ProtonOptions) -> frozenset[str]:
        claimed = {"hsa-queue"} if options.backend in QUEUE_INTERCEPTING else set()
        if options.backend in CUPTI_BACKENDS:
            claimed.add("cupti")
        return frozenset(claimed)

    def wrap(self, launch: Launch, out_dir: Path, options: ProtonOptions,
             ctx: TrialContext) -> Launch:
        # Under a multi-rank launcher every rank names its own file; the shim fills the rank in.
        name = rank_name(PROFILE_BASENAME, "") if ctx.per_rank else PROFILE_BASENAME
        if options.mode == "env":
            wrapped = launch.with_env(env_overlay(out_dir, options, name))
        else:
            python = proton_python_override(ctx.base_env)
            argv = cli_argv(launch.argv, out_dir, options, python, name)
            wrapped = importable_by_child(Launch(argv, launch.env, launch.unset), ctx,
                                          argv[1:argv.index("-m")], ProtonWrapError,
                                          f"{INSTALL_FIX}, or {ESCAPE}")
        env = {k: v for k, v in ctx.base_env.items() if k not in launch.unset} | dict(launch.env)
        devices = translate_devices(options.backend, env)
        return wrapped.with_env(devices.set, devices.unset)

    def child_imports(self, options: ProtonOptions) -> tuple[str, ...]:
        # mode cli: aorta's launcher imports Proton in the payload's interpreter
        return ("triton.profiler",) if options.mode == "cli" else ()

    def child_python(self, argv: Sequence[str], env: Mapping[str, str]) -> str | None:
        """$AORTA_PROTON_PYTHON names the interpreter that has Triton; else the command's."""
        return proton_python_override(env) or super().child_python(argv, env)

    def summarize(self, out_dir: Path, options: ProtonOptions, outcome: TrialOutcome) -> Metrics:
        metrics: Metrics = {"proton_artifact_dir": str(out_dir)}
        suffix = SUFFIXES[options.data]
        found = list_artifact_dir(out_dir)
        odd = next((name for name in found.odd if name.endswith(suffix)), None)
        if found.problem or odd:
            return metrics | capture_status(self.name, "unparsed", found.problem or (
                f"{odd} is not a regular file (symlink or special file); it was not read"))
        if not (files := [path for path in found.files if path.name.endswith(suffix)]):
            others = [p.name for p in found.files if p.name.endswith(_OTHER_OUTPUTS)]
            install = find_triton()
            pinned = options.mode == "cli" and options.backend != "auto"
            offered = cli_backends(install)[0] if pinned and install.version else ()
            missing = metrics | capture_status(self.name, "missing", missing_reason(
                options, outcome, install.release, others, offered))
            if options.mode == "env":
                return missing
            return with_attach_failure(self.name, missing, outcome, "install aorta into that "
                                       "interpreter (the command's python, or "
                                       "$AORTA_PROTON_PYTHON), or use mode: env")
        by_rank: dict[str, list[Path]] = {}
        for path in files:
            by_rank.setdefault(rank_of(path.name) or "", []).append(path)
        if "" in by_rank:   # not named by rank: one capture
            return metrics | _figures(files, options, outcome)
        per_rank = {r: _figures(files, options, outcome) for r, files in by_rank.items()}
        return metrics | summarize_ranks(self.name, per_rank, "gpu_time_ms", "kernel_count")

    def probe(self) -> Capability:
        python = proton_python_override(os.environ)
        install = find_triton(python, os.environ if python else None)
        version, python = install.version, install.python
        if version is None:
            return Capability(self.name, False, reason=f"Triton is not installed for {python} "
                              f"({install.problem})", fix="install triton (NVIDIA: pip install "
                              "triton; AMD: the ROCm PyTorch wheels bring pytorch-triton-rocm), "
                              "or set AORTA_PROTON_PYTHON to the interpreter that has it")
        if install.package_dir and not (install.package_dir / "profiler").is_dir():
            return Capability(self.name, False, version, f"Triton {version} has no profiler "
                              f"package (built with TRITON_BUILD_PROTON=OFF?)",
                              "install a Triton wheel that ships triton.profiler")
        vendor = gpu_vendor()
        backends, source = cli_backends(install)
        if vendor is None:
            return Capability(self.name, False, version, "no GPU found (no /dev/kfd, "
                              "/dev/nvidiactl or nvidia-smi)", "run on a machine with an AMD "
                              "or NVIDIA GPU; the cprofile collector runs anywhere",
                              {"backends": backend_table(backends, None, version)})
        auto = resolve_backend("auto", vendor, version)
        return Capability(self.name, True, version, f"Triton {version}; CLI backends "
                          f"{', '.join(backends) or 'unknown'}; auto resolves to {auto}",
                          details={"python": python, "distribution": install.distribution,
                                   "package_dir": str(install.package_dir), "vendor": vendor,
                                   "cli_backends": list(backends), "backends_from": source,
                                   "auto": auto,
                                   "backends": backend_table(backends, vendor, version)})

    def resolved(self, options: ProtonOptions, ctx: TrialContext) -> Metrics:
        python = proton_python_override(ctx.base_env)
        install = find_triton(python, ctx.base_env if python else None)
        out: Metrics = {"proton_backend": resolve_backend(options.backend, gpu_vendor(),
                                                          install.version),
                        "proton_triton_version": install.version or f"unknown ({install.problem})"}
        devices = translate_devices(options.backend, ctx.base_env)
        if devices.note:
            out["proton_device_note"] = devices.note
        rendered = mode_argument(options)
        if rendered and options.mode == "cli" and start_takes_mode(install) is False:
            out["proton_mode_note"] = (
                f"aorta: Triton {install.version}'s proton.start() takes no mode, so aorta's "
                f"launcher does not run the payload with --mode {rendered} (exit 2); drop the "
                f"mode or install a Triton whose start() has one")
        return out


def _session(out_dir: Path, opts: ProtonOptions, name: str) -> dict[str, str]:
    """The session's settings, in the launcher's flag order; those left out are Proton's to
    pick (`auto` is no backend given)."""
    settings = {"name": str(out_dir / name),
                "backend": "" if opts.backend == "auto" else opts.backend,
                "context": opts.context, "data": opts.data,
                "mode": mode_argument(opts) or "", "hook": opts.hook or ""}
    return {key: value for key, value in settings.items() if value}


def cli_argv(argv: tuple[str, ...], out_dir: Path, opts: ProtonOptions,
             python: str | None = None, name: str = PROFILE_BASENAME) -> tuple[str, ...]:
    """`argv` run by aorta's Proton launcher; `ProtonWrapError` when it cannot be (naming mode:
    env). Static: it needs no Triton, so a command no Proton could wrap is refused anywhere."""
    problem = cli_pin_problem(opts)          # before the launch shape: it holds for any command
    if problem:
        raise ProtonWrapError(f"proton: backend: {problem}")
    launch = split_python_launch(argv, "proton", ESCAPE, ProtonWrapError)
    flags = [item for key, value in _session(out_dir, opts, name).items()
             for item in (f"--{key}", value)]
    return launch.through(LAUNCHER, flags, python)


def env_overlay(out_dir: Path, opts: ProtonOptions, name: str = PROFILE_BASENAME) -> dict[str, str]:
    """The `AORTA_PROTON_*` variables of `mode: env`, mirroring the launcher's flags."""
    session = _session(out_dir, opts, name)
    return {f"{ENV_PREFIX}DIR": str(out_dir)} | {f"{ENV_PREFIX}{key.upper()}": value
                                                 for key, value in session.items()}


def start_takes_mode(install: TritonInstall) -> bool | None:
    """Whether that Triton's `proton.start()` has a `mode` parameter, read from the source of
    `triton/profiler/profile.py` (`def start(name=None, *, context=..., mode=None, ...)`);
    None when the file cannot be read or defines no `start` at its top level."""
    if install.package_dir is None:
        return None
    try:
        tree = ast.parse((install.package_dir / "profiler" / "profile.py").read_text("utf-8"))
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "start":
            params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            return any(a.arg == "mode" for a in params)
    return None


#: Proton's outputs of every kind, named when the one `data` reads is missing.
_OTHER_OUTPUTS = (".hatchet", ".hatchet_msgpack", ".chrome_trace")


def _figures(files: list[Path], opts: ProtonOptions, outcome: TrialOutcome) -> Metrics:
    return _trace_metrics(files) if opts.data == "trace" else _tree_metrics(files, opts, outcome)


def _tree_metrics(files: list[Path], opts: ProtonOptions, outcome: TrialOutcome) -> Metrics:
    summary = HatchetSummary()
    for path in files:
        try:
            summary.add_file(path)
        except ValueError as exc:
            return capture_status("proton", "unparsed",
                                  f"{exc}; with {len(files)} file(s), {_WITHHELD}")
    metrics: Metrics = {}
    if summary.scope_cycles:
        metrics["proton_scope_cycles"] = {k: int(v) if v.is_integer() else v
                                          for k, v in summary.scope_cycles.items()}
    if summary.kernels:
        if not (kernel_metrics := summary.kernels.metrics("proton")):
            return capture_status("proton", "unparsed", "the kernel times sum past the float "
                                  "range; no total is published")
        metrics.update(kernel_metrics)
    if not metrics and not summary.skips:
        release = find_triton().release
        return capture_status("proton", "empty", empty_reason(summary, opts, outcome, release))
    return settle("proton", metrics, summary.skips.count,
                  f"{summary.skips.describe('frame')}; figures cover only the frames read")


def _trace_metrics(files: list[Path]) -> Metrics:
    table, skips, bookkeeping = KernelTable(), Skips(), 0
    for path in files:
        try:
            for event in read_events(path, KERNEL_CATEGORIES, skips):
                stack = event.args.get("call_stack")       # dropped as the tree's frames are
                if isinstance(stack, list) and any(
                        str(frame).partition(":")[0] == METADATA_FRAME for frame in stack):
                    bookkeeping += 1
                else:
                    table.add(event.name, event.dur_us * 1e3)
        except (ValueError, OSError) as exc:
            return capture_status("proton", "unparsed",
                                  f"{exc}; with {len(files)} file(s), {_WITHHELD}")
    if not table and not skips:
        return capture_status("proton", "empty", f"only kernel events under {METADATA_FRAME} "
                              f"({bookkeeping}, Proton's own bookkeeping)" if bookkeeping else
                              "the chrome trace holds no kernel event (cat: kernel): Proton "
                              "recorded no GPU kernel")
    metrics = table.metrics("proton")
    if table and not metrics:
        return capture_status("proton", "unparsed", "the kernel times sum past the float range")
    return settle("proton", metrics, skips.count,
                  f"{skips.describe('event')}; figures cover only the events read")
