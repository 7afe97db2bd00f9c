"""A trial's launch: the child's starting environment, then every collector's wrapping. Under
a multi-rank launcher (torchrun, srun, mpirun), per-process collectors wrap each rank's command
behind the per-rank shim that gives every rank its own file names. `env_passthrough_mode: file`
also writes `child.env` (docs/sweep.md, "Recipes"); an environment a KEY=VALUE line cannot
hold is refused, naming the variable, never its value.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from aorta.base.errors import SetupError, UserError
from aorta.base.redaction import looks_secret
from aorta.collectors.base import (RANK_TOKEN, CollectorOptions, Launch, TrialContext,
                                   importable_by_child)
from aorta.store.run_dir import RunStore

#: What `env_passthrough_mode: clean` keeps from the caller's environment.
CLEAN_ENV_KEEP = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LC_ALL", "LC_CTYPE", "TERM",
                  "TMPDIR", "TZ", "SHELL")
ENV_FILE = "child.env"
ENV_FILE_VARIABLE = "AORTA_ENV_FILE"


def child_environment(mode: str, caller: Mapping[str, str],
                      overlay: Mapping[str, str]) -> dict[str, str]:
    """The environment a trial's child starts from, before collectors add theirs."""
    base = {k: caller[k] for k in CLEAN_ENV_KEEP if k in caller} if mode == "clean" else caller
    return {**base, **overlay}


def env_file_problem(env: Mapping[str, str]) -> str | None:
    """Why `env` cannot be written as KEY=VALUE lines, or None. Names only, never values."""
    for key in sorted(env):
        if not key or "=" in key or "\n" in key or "\r" in key or "\0" in key:
            shown = key.encode("unicode_escape").decode("ascii")[:80]
            return (f"the variable name {shown!r} cannot be written as a KEY=VALUE line "
                    f"(empty, or holds '=' or a newline)")
        # A credential's value is written as <redacted>, newline or not.
        if ("\n" in env[key] or "\r" in env[key]) and not looks_secret(key):
            return f"the value of {key} holds a newline, which a KEY=VALUE line cannot hold"
    return None


def launch_with_env_file(store: RunStore, cell: str, trial: str, launch: Launch,
                         env: Mapping[str, str]) -> Launch:
    """`launch` with `AORTA_ENV_FILE` added, after writing `child.env` for the environment
    `env`; `ValueError` (`env_file_problem`'s reason), with nothing written, when it cannot."""
    problem = env_file_problem(env)
    if problem is not None:
        raise ValueError(problem)
    path = str(store.trial_dir(cell, trial) / ENV_FILE)
    shown = store.redactor.env({**env, ENV_FILE_VARIABLE: path})
    store.write_trial_file(cell, trial, ENV_FILE,
                           "".join(f"{key}={shown[key]}\n" for key in sorted(shown)), private=True)
    return Launch(launch.argv, {**launch.env, ENV_FILE_VARIABLE: path}, launch.unset)


def refuse_unwritable_env(mode: str, caller_env: Mapping[str, str], launch: Launch) -> None:
    """`UserError` before any trial (not one error trial after another) when mode `file`
    cannot write the first trial's environment."""
    if mode != "file":
        return
    child_env = {k: v for k, v in caller_env.items() if k not in launch.unset}
    problem = env_file_problem({**child_env, **launch.env})
    if problem is not None:
        raise UserError(f"env_passthrough_mode file: {problem}; unset it before running aorta, "
                        f"or use env_passthrough_mode inherit")


def _wrap(names: list[str], launch: Launch, trial_dir: Path,
          collectors: Mapping[str, CollectorOptions], ctx: TrialContext) -> Launch:
    """`launch` wrapped by `names`, the last one innermost."""
    from aorta.collectors.registry import get

    for name in reversed(names):
        try:
            launch = get(name).wrap(launch, trial_dir / name, collectors[name], ctx)
        except SetupError:
            raise
        except Exception as exc:   # a collector's bug must not lose the trial's record
            raise SetupError(f"{name}: the collector failed while attaching: "
                             f"{type(exc).__name__}: {exc}") from None
    return launch


def wrap_launch(command: tuple[str, ...], overlay: Mapping[str, str], trial_dir: Path,
                collectors: Mapping[str, CollectorOptions], ctx: TrialContext) -> Launch:
    """The command after every collector wrapped it (innermost first). May raise SetupError."""
    from aorta.collectors.rank_launch import split_rank_launch
    from aorta.collectors.registry import get

    names = list(collectors)
    per_process = [n for n in names if get(n).per_process]
    ranks = split_rank_launch(command) if per_process else None
    if ranks is None:
        return _wrap(names, Launch(command, overlay), trial_dir, collectors, ctx)
    rank_ctx = TrialContext(ctx.cell, ctx.index, ctx.trial_dir, ctx.base_env, per_rank=True)
    inner = _wrap(per_process, Launch(ranks.inner, overlay), trial_dir, collectors, rank_ctx)
    templated = [arg for key, value in inner.env.items() if RANK_TOKEN in value
                 for arg in ("--env", key)]
    shim = (sys.executable, "-m", "aorta.launchers.per_rank", *templated, "--")
    launch = importable_by_child(Launch(ranks.prefix + shim + inner.argv, inner.env, inner.unset),
                                 ctx, (), SetupError, "install aorta (pip install -e .)")
    return _wrap([n for n in names if n not in per_process], launch, trial_dir, collectors, ctx)
