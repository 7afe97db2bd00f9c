"""`proton`: Triton's profiler, attached to a Python payload.

`mode: cli` rewrites `python [safe flags] script.py args` (or `pytest ...`, `python -m pytest ...`)
into aorta's own launcher, which runs the unmodified script inside the Proton session that
`python -m triton.profiler.proton` would start, and writes the capture however the script ends:

    <that python> [safe flags] -m aorta.launchers.proton_run --name <out>/proton [--backend B]
        --context C --data D [--mode M] [--hook HOOK] [--pytest] -- <target...>

`$AORTA_PROTON_PYTHON` replaces the interpreter. `mode: env` leaves argv alone and hands the
payload `AORTA_PROTON_{DIR,NAME,CONTEXT,DATA,BACKEND,MODE,HOOK}`; the payload calls
`proton.start()`/`proton.finalize()` itself.

Metrics: the common scheme from the `.hatchet` leaves (or the `.chrome_trace` kernel events under
`data: trace`), `proton_scope_cycles` for `backend: instrumentation`, `proton_skipped` when
frames or events were left out (a `partial` capture, docs/collectors/reading.md), and from
`resolved`:
`proton_backend` (what `auto` became), `proton_triton_version`, `proton_device_note`,
`proton_mode_note`. Options, states and reasons: docs/collectors/proton.md.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aorta.base.errors import SetupError
from aorta.collectors.attach_failure import with_attach_failure
from aorta.collectors.base import (Capability, Collector, CollectorOptions, Launch, Metrics,
                                   TrialContext, TrialOutcome, capture_status, settle)
from aorta.collectors.binaries import gpu_vendor
from aorta.collectors.child_import import importable_by_child
from aorta.collectors.proton.backends import CUPTI_BACKENDS, QUEUE_INTERCEPTING, backend_table
from aorta.collectors.proton.host import (TritonInstall, cli_backends, find_triton,
                                          proton_python_override, resolve_backend,
                                          translate_devices)
from aorta.collectors.proton.options import (ProtonOptions, check_known_keys, cli_pin_problem,
                                             mode_argument)
from aorta.collectors.python_launch import split_python_launch
from aorta.collectors.ranks import rank_capture, rank_name, rank_of, rollup
from aorta.parsers.skips import Skips

PROFILE_BASENAME = "proton"
LAUNCHER = "aorta.launchers.proton_run"
ENV_PREFIX = "AORTA_PROTON_"
ESCAPE = ("use mode: env instead (argv stays as it is; the payload calls "
          "proton.start(os.environ['AORTA_PROTON_NAME'], ...) and proton.finalize() itself)")
SUFFIXES = {"tree": ".hatchet", "trace": ".chrome_trace"}
_AUTO_TEXT = "auto, which resolves to rocprofiler or roctracer on AMD and cupti on NVIDIA"


class ProtonWrapError(SetupError):
    """Proton cannot attach to this launch; the message names `mode: env` as the way out."""


class ProtonCollector(Collector):
    name = "proton"
    wrap_rank = 70
    options_model = ProtonOptions
    per_process = True
    summary = "Triton's Proton: GPU time and launches per kernel of a Python/Triton payload"

    def validate(self, raw: Mapping[str, Any] | None) -> CollectorOptions:
        check_known_keys(raw)
        return super().validate(raw)

    def describe(self, options: CollectorOptions) -> str:
        backend = _typed(options).backend
        return f"proton (backend: {_AUTO_TEXT if backend == 'auto' else backend})"

    def claims(self, options: CollectorOptions) -> frozenset[str]:
        backend = _typed(options).backend
        claimed = {"hsa-queue"} if backend in QUEUE_INTERCEPTING else set()
        if backend in CUPTI_BACKENDS:
            claimed.add("cupti")
        return frozenset(claimed)

    def wrap(self, launch: Launch, out_dir: Path, options: CollectorOptions,
             ctx: TrialContext) -> Launch:
        opts = _typed(options)
        # Under a multi-rank launcher every rank names its own file; the shim fills the rank in.
        name = rank_name(PROFILE_BASENAME, "") if ctx.per_rank else PROFILE_BASENAME
        if opts.mode == "env":
            wrapped = launch.with_env(env_overlay(out_dir, opts, name))
        else:
            python = proton_python_override(ctx.base_env)
            argv = cli_argv(launch.argv, out_dir, opts, python, name)
            wrapped = importable_by_child(
                Launch(argv, launch.env, launch.unset), ctx, argv[1:argv.index("-m")],
                ProtonWrapError, f"install aorta (pip install -e .) in the payload's Python, "
                                 f"or {ESCAPE}")
        devices = translate_devices(opts.backend, _child_env(ctx.base_env, launch))
        return wrapped.with_env(devices.set, devices.unset)

    def child_imports(self, options: CollectorOptions) -> tuple[str, ...]:
        # mode cli: aorta's launcher imports Proton in the payload's interpreter
        return ("triton.profiler",) if _typed(options).mode == "cli" else ()

    def child_python(self, argv: Sequence[str], env: Mapping[str, str]) -> str | None:
        """$AORTA_PROTON_PYTHON names the interpreter that has Triton; else the command's."""
        return proton_python_override(env) or super().child_python(argv, env)

    def summarize(self, out_dir: Path, options: CollectorOptions,
                  outcome: TrialOutcome) -> Metrics:
        opts = _typed(options)
        metrics: Metrics = {"proton_artifact_dir": str(out_dir)}
        try:
            found = list_artifacts(out_dir, SUFFIXES[opts.data])
        except OSError as exc:      # e.g. a parent dir that cannot be searched
            found = Artifacts(problem=f"cannot inspect the artifact dir: {exc}")
        if found.problem:
            return metrics | capture_status(self.name, "unparsed", found.problem)
        if not found.files:
            install = find_triton()
            pinned = opts.mode == "cli" and opts.backend != "auto"
            offered = cli_backends(install)[0] if pinned and install.version else ()
            from aorta.collectors.proton.reasons import missing_reason

            missing = metrics | capture_status(self.name, "missing", missing_reason(
                opts, outcome, install.release, found.others, offered))
            return with_attach_failure(self.name, missing, outcome) if opts.mode == "cli" \
                else missing
        by_rank: dict[str, list[Path]] = {}
        for path in found.files:
            by_rank.setdefault(rank_of(path.name) or "", []).append(path)
        if "" in by_rank:   # not named by rank: one capture
            return metrics | self._figures(found.files, opts, outcome)
        return metrics | self._rank_figures(by_rank, opts, outcome)

    @staticmethod
    def _figures(files: list[Path], opts: ProtonOptions, outcome: TrialOutcome) -> Metrics:
        if opts.data == "trace":
            return _trace_metrics(files)
        return _tree_metrics(files, opts, outcome)

    def _rank_figures(self, by_rank: Mapping[str, list[Path]], opts: ProtonOptions,
                      outcome: TrialOutcome) -> Metrics:
        """One capture per rank: each rank's figures, then the roll-up over ranks."""
        per_rank = {r: self._figures(files, opts, outcome) for r, files in by_rank.items()}
        figures = {r: {k: m[f"proton_{k}"] for k in ("gpu_time_ms", "kernel_count")
                       if f"proton_{k}" in m} for r, m in per_rank.items()}
        out = rollup(self.name, figures, "gpu_time_ms", "kernel_count")
        return out | rank_capture(self.name, per_rank)

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

    def resolved(self, options: CollectorOptions, ctx: TrialContext) -> Metrics:
        opts = _typed(options)
        python = proton_python_override(ctx.base_env)
        install = find_triton(python, ctx.base_env if python else None)
        out: Metrics = {
            "proton_backend": resolve_backend(opts.backend, gpu_vendor(), install.version),
            "proton_triton_version": install.version or f"unknown ({install.problem})",
        }
        devices = translate_devices(opts.backend, ctx.base_env)
        if devices.note:
            out["proton_device_note"] = devices.note
        rendered = mode_argument(opts)
        if rendered and opts.mode == "cli" and start_takes_mode(install) is False:
            out["proton_mode_note"] = (
                f"aorta: Triton {install.version}'s proton.start() takes no mode, so aorta's "
                f"launcher does not run the payload with --mode {rendered} (exit 2); drop the "
                f"mode or install a Triton whose start() has one")
        return out


def _typed(options: CollectorOptions) -> ProtonOptions:
    if not isinstance(options, ProtonOptions):
        raise TypeError(f"proton: expected ProtonOptions, got {type(options).__name__}")
    return options


def _child_env(base: Mapping[str, str], launch: Launch) -> dict[str, str]:
    env = {k: v for k, v in base.items() if k not in launch.unset}
    env.update(launch.env)
    return env


def cli_flags(out_dir: Path, opts: ProtonOptions, name: str = PROFILE_BASENAME) -> list[str]:
    """The launcher's session flags for `opts`, writing `<out_dir>/<name>.<suffix>`."""
    flags = ["--name", str(out_dir / name)]
    if opts.backend != "auto":
        flags += ["--backend", opts.backend]
    flags += ["--context", opts.context, "--data", opts.data]
    rendered = mode_argument(opts)
    if rendered:
        flags += ["--mode", rendered]
    if opts.hook:
        flags += ["--hook", opts.hook]
    return flags


def cli_argv(argv: tuple[str, ...], out_dir: Path, opts: ProtonOptions,
             python: str | None = None, name: str = PROFILE_BASENAME) -> tuple[str, ...]:
    """`argv` run by aorta's Proton launcher; `ProtonWrapError` when it cannot be (naming mode:
    env). Static: it needs no Triton, so a command no Proton could wrap is refused anywhere."""
    problem = cli_pin_problem(opts)          # before the launch shape: it holds for any command
    if problem:
        raise ProtonWrapError(f"proton: backend: {problem}")
    launch = split_python_launch(argv, "proton", ESCAPE, ProtonWrapError)
    head = [python or launch.python, *launch.flags, "-m", LAUNCHER, *cli_flags(out_dir, opts, name)]
    target = ["--pytest", "--", *launch.args] if launch.is_pytest \
        else ["--", launch.script or "", *launch.args]
    return tuple(head + target)


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


def env_overlay(out_dir: Path, opts: ProtonOptions,
                name: str = PROFILE_BASENAME) -> dict[str, str]:
    """The `AORTA_PROTON_*` variables of `mode: env`, mirroring the launcher's flags."""
    env = {
        f"{ENV_PREFIX}DIR": str(out_dir),
        f"{ENV_PREFIX}NAME": str(out_dir / name),
        f"{ENV_PREFIX}CONTEXT": opts.context,
        f"{ENV_PREFIX}DATA": opts.data,
    }
    if opts.backend != "auto":
        env[f"{ENV_PREFIX}BACKEND"] = opts.backend
    rendered = mode_argument(opts)
    if rendered:
        env[f"{ENV_PREFIX}MODE"] = rendered
    if opts.hook:
        env[f"{ENV_PREFIX}HOOK"] = opts.hook
    return env


@dataclass
class Artifacts:
    files: list[Path] = field(default_factory=list)
    others: list[str] = field(default_factory=list)    # Proton outputs of another kind
    problem: str = ""


_OTHER_OUTPUTS = (".hatchet", ".hatchet_msgpack", ".chrome_trace")


def list_artifacts(root: Path, suffix: str) -> Artifacts:
    """Regular files named `*<suffix>` under `root`, sorted. Symlinks are refused, not followed:
    the collector reads only what Proton wrote into the directory the engine created."""
    found = Artifacts()
    if root.is_symlink():
        found.problem = f"the artifact dir {root} is a symlink; aorta does not follow it"
        return found
    if not root.exists():
        return found
    if not root.is_dir():
        found.problem = f"the artifact dir {root} is not a directory"
        return found
    errors: list[OSError] = []
    for folder, _dirs, names in os.walk(root, onerror=errors.append, followlinks=False):
        for name in sorted(names):
            path = Path(folder) / name
            if name.endswith(suffix):
                if path.is_symlink() or not path.is_file():
                    found.problem = f"{path.relative_to(root)} is not a regular file " \
                                    f"(symlink or special file); it was not read"
                    return found
                found.files.append(path)
            elif name.endswith(_OTHER_OUTPUTS):
                found.others.append(name)
    if errors:
        found.problem = f"cannot list the artifact dir: {errors[0]}"
    found.files.sort()
    return found


def _tree_metrics(files: list[Path], opts: ProtonOptions, outcome: TrialOutcome) -> Metrics:
    from aorta.collectors.proton.reasons import empty_reason
    from aorta.parsers.hatchet import HatchetSummary

    summary = HatchetSummary()
    for path in files:
        try:
            summary.add_file(path)
        except ValueError as exc:
            return capture_status("proton", "unparsed", f"{exc}; with {len(files)} file(s), "
                                  f"totals are withheld rather than undercounted")
    metrics: Metrics = {}
    if summary.scope_cycles:
        metrics["proton_scope_cycles"] = {k: int(v) if v.is_integer() else v
                                          for k, v in summary.scope_cycles.items()}
    if summary.kernels:
        kernel_metrics = summary.kernels.metrics("proton")
        if not kernel_metrics:
            return capture_status("proton", "unparsed", "the kernel times sum past the float "
                                  "range; no total is published")
        metrics.update(kernel_metrics)
    if not metrics and not summary.skips:
        release = find_triton().release
        return capture_status("proton", "empty", empty_reason(summary, opts, outcome, release))
    return settle("proton", metrics, summary.skips.count,
                  f"{summary.skips.describe('frame')}; figures cover only the frames read")


def _trace_metrics(files: list[Path]) -> Metrics:
    from aorta.parsers.chrome_trace import KERNEL_CATEGORIES, read_events
    from aorta.parsers.kernel_table import KernelTable

    table, skips = KernelTable(), Skips()
    for path in files:
        try:
            for event in read_events(path, KERNEL_CATEGORIES, skips):
                table.add(event.name, event.dur_us * 1e3)
        except (ValueError, OSError) as exc:
            return capture_status("proton", "unparsed", f"{exc}; with {len(files)} file(s), "
                                  f"totals are withheld rather than undercounted")
    if not table and not skips:
        return capture_status("proton", "empty", "the chrome trace holds no kernel event "
                                                 "(cat: kernel): Proton recorded no GPU kernel")
    metrics = table.metrics("proton")
    if table and not metrics:
        return capture_status("proton", "unparsed", "the kernel times sum past the float range")
    return settle("proton", metrics, skips.count,
                  f"{skips.describe('event')}; figures cover only the events read")
