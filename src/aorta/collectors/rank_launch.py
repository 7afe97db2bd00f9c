"""Recognising launches that start several ranks, so per-process collectors wrap each rank.

    torchrun [opts] script.py args              -> torchrun [opts] --no-python | python script.py args
    python -m torch.distributed.run [opts] ...  -> the same, with that python
    srun [opts] python script.py args           -> srun [opts] | python script.py args
    mpirun / mpiexec [opts] python script.py    -> likewise

The part after `|` is what a script-taking collector (cprofile, proton, torch) wraps; the
engine puts the per-rank shim (`aorta.launchers.per_rank`) between the two halves.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aorta.collectors.python_launch import pytest_python, is_python

# torchrun options that take no value (everything else starting with "-" consumes one token,
# unless written --opt=value). From `torchrun --help` (torch.distributed.run).
_TORCHRUN_FLAGS = frozenset({"--standalone", "--run-path", "--run_path", "--virtual-local-rank",
                             "--virtual_local_rank"})
_MPI_LAUNCHERS = frozenset({"srun", "mpirun", "mpiexec", "mpiexec.hydra", "orterun"})


@dataclass(frozen=True)
class RankLaunch:
    prefix: tuple[str, ...]     # the launcher and its options, ready to run a program per rank
    inner: tuple[str, ...]      # the per-rank command: `python [flags] script.py args`


def split_rank_launch(argv: tuple[str, ...] | list[str]) -> RankLaunch | None:
    """The launcher and per-rank halves of a multi-rank launch, or None for anything else."""
    argv = tuple(argv)
    if not argv:
        return None
    name = Path(argv[0]).name
    if name == "torchrun":
        return _torchrun(argv[:1], argv[1:], pytest_python(argv[0]))
    if is_python(argv[0]) and argv[1:3] == ("-m", "torch.distributed.run"):
        return _torchrun(argv[:3], argv[3:], argv[0])
    if name in _MPI_LAUNCHERS:
        for i, token in enumerate(argv[1:], start=1):
            if is_python(token):
                return RankLaunch(argv[:i], argv[i:])
    return None


def _torchrun(head: tuple[str, ...], rest: tuple[str, ...], python: str) -> RankLaunch | None:
    opts: list[str] = []
    i = 0
    while i < len(rest) and rest[i].startswith("-"):
        token = rest[i]
        if token in ("--no-python", "--no_python", "-m", "--module"):
            return None   # already runs a program or module of its own: leave it alone
        opts.append(token)
        if "=" not in token and token not in _TORCHRUN_FLAGS and i + 1 < len(rest):
            opts.append(rest[i + 1])
            i += 1
        i += 1
    if i >= len(rest):
        return None
    return RankLaunch(head + tuple(opts) + ("--no-python",), (python,) + rest[i:])
