"""Run one rank's command with its rank filled in: `python -m aorta.launchers.per_rank
[--env NAME ...] -- COMMAND...`.

Every `%aorta_rank%` in COMMAND and in the `--env` variables becomes this process's rank (the
first of RANK_VARIABLES set; `pid<N>` otherwise), so ranks never overwrite each other's files.
The command then replaces this process (exec): exit codes and signals pass through untouched.
"""

from __future__ import annotations

import os
import sys

RANK_TOKEN = "%aorta_rank%"
RANK_VARIABLES = ("RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
                  "MV2_COMM_WORLD_RANK")


def current_rank(env: dict[str, str] | os._Environ[str]) -> str:
    for name in RANK_VARIABLES:
        value = env.get(name, "").strip()
        if value.isdigit():
            return value
    return f"pid{os.getpid()}"


def main(argv: list[str]) -> int:
    names: list[str] = []
    while argv and argv[0] == "--env" and len(argv) > 1:
        names.append(argv[1])
        argv = argv[2:]
    if not argv or argv[0] != "--" or len(argv) < 2:
        print("aorta per_rank: usage: python -m aorta.launchers.per_rank [--env NAME] -- CMD...",
              file=sys.stderr)
        return 2
    rank = current_rank(os.environ)
    command = [a.replace(RANK_TOKEN, rank) for a in argv[1:]]
    env = dict(os.environ)
    for name in names:
        if name in env:
            env[name] = env[name].replace(RANK_TOKEN, rank)
    try:
        os.execvpe(command[0], command, env)
    except OSError as exc:
        print(f"aorta per_rank: cannot execute {command[0]!r}: {exc.strerror or exc}",
              file=sys.stderr)
        return 127 if isinstance(exc, FileNotFoundError) else 126
    return 0  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
