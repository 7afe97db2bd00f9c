"""The collector contract: how a profiler attaches to a launch and what it publishes.

A collector validates its options at recipe load, names the resources it claims, rewrites a
launch (`wrap`) or samples beside it (`sample`), reads what the profiler wrote (`summarize`: never
raises, never invents a number) and says whether it can work here (`probe`). Metric names and
capture states (`CAPTURE_STATES`): docs/collectors/writing.md and docs/collectors/reading.md.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict

from aorta.base.errors import SetupError
from aorta.base.source_tree import aorta_root
from aorta.collectors.child_python import command_python
from aorta.collectors.options import validate_options
from aorta.launchers.per_rank import RANK_TOKEN
from aorta.store.record_checks import CAPTURE_STATES

__all__ = ["RANK_TOKEN", "CAPTURE_STATES", "Capability", "Collector", "CollectorOptions", "Launch",
           "Metrics", "TrialContext", "TrialOutcome", "capture_status", "settle", "cut_short",
           "COUNT_KEYS", "Sampler"]

Metrics = dict[str, Any]

#: Count metrics a partial capture leaves out: a count known to be short is an untrusted count.
COUNT_KEYS = ("kernel_count", "cpu_op_count", "call_count")


class CollectorOptions(BaseModel):
    """Base of every collector's options: strict, frozen, unknown keys refused."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)


OptionsT = TypeVar("OptionsT", bound=CollectorOptions)


@dataclass(frozen=True)
class Launch:
    """What a trial starts: argv (run directly, no shell) plus changes to the child's env:
    `env` values are set, `unset` names are removed; both apply to the child only."""

    argv: tuple[str, ...]
    env: Mapping[str, str] = field(default_factory=dict)
    unset: frozenset[str] = frozenset()

    def with_prefix(self, prefix: list[str] | tuple[str, ...]) -> Launch:
        return Launch(tuple(prefix) + self.argv, self.env, self.unset)

    def with_env(self, extra: Mapping[str, str], unset: frozenset[str] = frozenset()) -> Launch:
        env = {k: v for k, v in self.env.items() if k not in unset}
        env.update(extra)
        return Launch(self.argv, env, (self.unset | unset) - set(extra))


@dataclass(frozen=True)
class TrialContext:
    """What a collector may know about the trial it wraps. `base_env` is the child's environment
    before any collector touched it (the caller's or the clean set, plus recipe and cell)."""

    cell: str
    index: int
    trial_dir: Path
    base_env: Mapping[str, str]
    #: The command starts several ranks and this collector wraps each one: put `RANK_TOKEN`
    #: in every file name (argv or env values) so ranks never overwrite each other's files.
    per_rank: bool = False


@dataclass(frozen=True)
class TrialOutcome:
    """How the payload ended, for collectors whose capture depends on it."""

    exit_code: int | None
    signal: int | None
    timed_out: bool
    launched: bool
    stderr_path: Path | None = None
    #: The environment the trial started from (before collectors), to find the same tools.
    base_env: Mapping[str, str] = field(default_factory=dict)


class Sampler(Protocol):
    """Something that records beside a running payload. `payload_started` tells it which
    process the payload is (its pid, start time in clock ticks and trial token, by which
    `aorta.host.proc_table.in_trial` knows the payload's processes); `stop()` ends it and writes
    what it recorded into the collector's directory, where `summarize` reads it."""

    def payload_started(self, pid: int, start_ticks: int, token: str) -> None: ...

    def stop(self) -> None: ...


@dataclass(frozen=True)
class Capability:
    """Whether a collector (or one of its backends) can measure on this machine, and why not.

    `details["backends"]`, a mapping of backend -> {usable, version, reason, fix}, gives each
    backend its own row in `aorta doctor`."""

    name: str
    usable: bool
    version: str | None = None
    reason: str = ""
    fix: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)


def capture_status(name: str, state: str, reason: str = "", skipped: int | None = None) -> Metrics:
    """The `<name>_capture` metric and its reason; `partial` needs a reason and the number of
    records left out (`<name>_skipped`), else `ValueError`."""
    if state not in CAPTURE_STATES:
        raise ValueError(f"capture state {state!r} is not one of {CAPTURE_STATES}")
    if state == "partial" and (not reason or not skipped or skipped < 0):
        raise ValueError("a partial capture needs a reason and a positive skipped count")
    metrics: Metrics = {f"{name}_capture": state}
    if reason:
        metrics[f"{name}_capture_reason"] = reason
    if skipped is not None:
        metrics[f"{name}_skipped"] = skipped
    return metrics


def settle(name: str, figures: Metrics, skipped: int, why: str) -> Metrics:
    """`figures` with the shared rule's capture state: `ok` when nothing was skipped, else
    `partial` without `COUNT_KEYS` (a short count is untrusted), or `unparsed` when nothing is
    left to publish."""
    if not skipped:
        return figures | capture_status(name, "ok")
    if not figures:
        return capture_status(name, "unparsed", why, skipped)
    kept = {k: v for k, v in figures.items() if k not in {f"{name}_{c}" for c in COUNT_KEYS}}
    return kept | capture_status(name, "partial", why, skipped)


def cut_short(outcome: TrialOutcome, before: str) -> str:
    """Why a profiler that writes at exit may have written nothing: the payload never started,
    or the trial's timeout or a signal ended it before `before` ("nsys wrote its report");
    '' when the payload ended by itself."""
    if not outcome.launched:
        return "the payload never started"
    if outcome.timed_out:
        return f"the trial timed out before {before}"
    if outcome.signal is not None:
        return f"the payload was killed by signal {outcome.signal} before {before}"
    return ""


INSTALL_FIX = "install aorta (pip install -e .) in the payload's Python"


def importable_by_child(launch: Launch, ctx: TrialContext, flags: tuple[str, ...],
                        error: type[SetupError] = SetupError, fix: str = INSTALL_FIX) -> Launch:
    """`launch` with aorta's source tree on the child's PYTHONPATH when aorta runs from one
    (an installed aorta is found by itself), so the child imports aorta's launchers; `error`
    ending with `fix` when the interpreter's `flags` make it ignore PYTHONPATH. A whole
    site-packages is never added: it would shadow the payload's standard library."""
    if (root := aorta_root()) is None:
        return launch
    if ignoring := sorted({"-I", "-E"} & set(flags)):
        raise error(f"the interpreter option {' '.join(ignoring)} ignores PYTHONPATH, and aorta "
                    f"is not installed (it runs from {root}), so the payload's Python could not "
                    f"import aorta's launcher; {fix}, or drop {ignoring[0]}")
    inherited = "" if "PYTHONPATH" in launch.unset else ctx.base_env.get("PYTHONPATH", "")
    current = launch.env.get("PYTHONPATH", inherited)
    entries = [root] + [p for p in current.split(os.pathsep) if p and p != root]
    return launch.with_env({"PYTHONPATH": os.pathsep.join(entries)})


class Collector(ABC, Generic[OptionsT]):
    """One profiler: subclass `Collector[MyOptions]`, set the class attributes and implement
    `wrap`, `summarize` and `probe`; every other method has a default that fits most."""

    name: ClassVar[str]
    #: Lower ranks wrap outermost: whole-process profilers first, script takers last (the
    #: built-ins: rocprof 10, nsys 20, ncu 30, proton 70, torch 80, cprofile 90, telemetry 100).
    wrap_rank: ClassVar[int]
    #: True for collectors that take over one Python process (cprofile, proton, torch): under a
    #: multi-rank launcher (torchrun, srun, mpirun) they wrap each rank, not the launcher.
    per_process: ClassVar[bool] = False
    #: The options' model; the base one takes no option.
    options_model: ClassVar[type[CollectorOptions]] = CollectorOptions
    #: One line for `aorta collectors`.
    summary: ClassVar[str] = ""

    def validate(self, raw: Mapping[str, Any] | None) -> OptionsT:
        """Typed, normalised options; raises `OptionError` naming the key and allowed values."""
        return cast(OptionsT, validate_options(self.name, self.options_model, raw))

    def describe(self, options: OptionsT) -> str:
        """How conflict messages name this collector with these options."""
        return self.name

    def claims(self, options: OptionsT) -> frozenset[str]:
        """Exclusive resources this collector takes in a trial (see `conflicts.RESOURCES`)."""
        return frozenset()

    @abstractmethod
    def wrap(self, launch: Launch, out_dir: Path, options: OptionsT, ctx: TrialContext) -> Launch:
        """Attach to `launch`, writing into `out_dir`. Pure apart from resolving binaries.

        Raises `SetupError` (naming the escape hatch) when it cannot attach; a sampler-only
        collector returns `launch` as it is.
        """

    @abstractmethod
    def summarize(self, out_dir: Path, options: OptionsT, outcome: TrialOutcome) -> Metrics:
        """Metrics from the artifacts in `out_dir`. Never raises; always sets `<name>_capture`."""

    def sample(self, out_dir: Path, options: OptionsT, ctx: TrialContext,
               devices: Sequence[str] | None) -> Sampler | None:
        """Start recording beside the payload (into `out_dir`), or None: most collectors only
        wrap the launch. `devices` are the GPUs the trial was pinned to (None: not pinned).
        The runner stops the sampler once the payload has ended, before `summarize`; an
        exception here or in `stop()` makes the capture `unparsed`, the trial still runs."""
        return None

    @abstractmethod
    def probe(self) -> Capability:
        """Can this collector measure here? Cheap: no profiling run."""

    def child_imports(self, options: OptionsT) -> tuple[str, ...]:
        """Modules the payload's own interpreter must import for this collector to attach
        (its launcher's profiler, e.g. `torch`); checked with that interpreter before a sweep
        and by `aorta doctor`. Empty when the collector needs nothing from it."""
        return ()

    def child_python(self, argv: Sequence[str], env: Mapping[str, str]) -> str | None:
        """The interpreter that will import `child_imports` for the command `argv` in the
        child's environment `env`: by default the command's own Python on that PATH."""
        return command_python(argv, env)

    def resolved(self, options: OptionsT, ctx: TrialContext) -> Metrics:
        """What the collector resolved for this trial (e.g. the backend `auto` picked)."""
        return {}
