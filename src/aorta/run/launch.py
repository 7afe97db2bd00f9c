"""A trial's launch: the child's starting environment, then every collector's wrapping.

Under a multi-rank launcher (torchrun, srun, mpirun), per-process collectors wrap each rank's
command behind the per-rank shim that gives every rank its own file names. The framework, not
each collector, turns a collector's unexpected exception into a setup error for the trial.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from aorta.base.errors import SetupError
from aorta.collectors.base import RANK_TOKEN, CollectorOptions, Launch, TrialContext
from aorta.run.rerun import CLEAN_ENV_KEEP


def child_environment(mode: str, caller: Mapping[str, str],
                      overlay: Mapping[str, str]) -> dict[str, str]:
    """The environment a trial's child starts from, before collectors add theirs."""
    if mode == "clean":
        base = {k: caller[k] for k in CLEAN_ENV_KEEP if k in caller}
    else:
        base = dict(caller)
    base.update(overlay)
    return base


def _wrap(name: str, launch: Launch, out_dir: Path, options: CollectorOptions,
          ctx: TrialContext) -> Launch:
    from aorta.collectors.registry import get

    try:
        return get(name).wrap(launch, out_dir, options, ctx)
    except SetupError:
        raise
    except Exception as exc:   # a collector's bug must not lose the trial's record
        raise SetupError(f"{name}: the collector failed while attaching: "
                         f"{type(exc).__name__}: {exc}") from None


def wrap_launch(command: tuple[str, ...], overlay: Mapping[str, str], trial_dir: Path,
                collectors: Mapping[str, CollectorOptions], ctx: TrialContext) -> Launch:
    """The command after every collector wrapped it (innermost first). May raise SetupError."""
    from aorta.collectors.child_import import importable_by_child
    from aorta.collectors.rank_launch import split_rank_launch
    from aorta.collectors.registry import get

    names = list(collectors)
    per_process = [n for n in names if get(n).per_process]
    ranks = split_rank_launch(command) if per_process else None
    if ranks is None:
        launch = Launch(command, overlay)
        for name in reversed(names):
            launch = _wrap(name, launch, trial_dir / name, collectors[name], ctx)
        return launch
    rank_ctx = TrialContext(ctx.cell, ctx.index, ctx.trial_dir, ctx.base_env, per_rank=True)
    inner = Launch(ranks.inner, overlay)
    for name in reversed(per_process):
        inner = _wrap(name, inner, trial_dir / name, collectors[name], rank_ctx)
    templated = [arg for key, value in inner.env.items() if RANK_TOKEN in value
                 for arg in ("--env", key)]
    shim = (sys.executable, "-m", "aorta.launchers.per_rank", *templated, "--")
    launch = importable_by_child(Launch(ranks.prefix + shim + inner.argv, inner.env, inner.unset),
                                 ctx, (), SetupError, "install aorta (pip install -e .)")
    for name in reversed([n for n in names if n not in per_process]):
        launch = _wrap(name, launch, trial_dir / name, collectors[name], ctx)
    return launch
