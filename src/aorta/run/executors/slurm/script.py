"""What aorta hands to `sbatch` besides the job's own options: the resources every job asks
for, and the batch scripts (docs/slurm.md shows one), the one file with shell syntax aorta
writes: fixed lines whose only values are paths, each `shlex.quote`d. With setup scripts it runs
under /bin/bash, for which clusters' `module` and a virtual environment's `activate` are written.
"""

from __future__ import annotations

import os
import shlex
import stat
from collections.abc import Sequence
from pathlib import Path

from aorta.base.errors import SetupError
from aorta.run.executors.slurm.options import SlurmOptions


def resource_options(config: SlurmOptions) -> list[str]:
    """The sbatch options of one trial's share of a node; the probe job asks for the same,
    so that it sees what a trial will see (the GPUs Slurm gives it, for one)."""
    options = ["--nodes=1", "--ntasks=1", f"--cpus-per-task={config.cpus_per_trial}"]
    if config.gpus_per_trial:
        options.append(f"--gres=gpu:{config.gpus_per_trial}")
    for key in ("mem", "time", "partition", "account"):    # each is its sbatch flag's name
        if getattr(config, key) is not None:
            options.append(f"--{key}={getattr(config, key)}")
    return options


def job_options(config: SlurmOptions, name: str, logs: Path, stem: str, cwd: Path,
                array: str | None = None, after: str | None = None) -> list[str]:
    """The sbatch argv of a job (an array of tasks `array`) called `name`, logging to
    `<logs>/<stem>.out` and `.err`, run after job `after`. The recipe's `sbatch_args` come
    last, so they override aorta's own choices."""
    pattern = str(logs).replace("%", "%%")   # '%' starts a Slurm filename pattern
    options = [f"--job-name={name}", *([f"--array={array}"] if array else []),
               f"--output={pattern}/{stem}.out", f"--error={pattern}/{stem}.err",
               f"--chdir={cwd}", *resource_options(config)]
    if after is not None:
        options.append(f"--dependency=afterany:{after}")
    return options + list(config.sbatch_args)


def setup_files(paths: Sequence[str], cwd: Path) -> tuple[str, ...]:
    """The recipe's `executor.setup` as absolute paths (relative to `cwd`, the jobs' too).
    SetupError for one that is not a readable regular file here: the nodes must see it too."""
    found = []
    for given in paths:
        path = Path(os.path.expanduser(given))
        path = path if path.is_absolute() else cwd / path
        try:
            mode = path.stat().st_mode
        except OSError as exc:
            raise SetupError(f"executor.setup: {path}: {exc.strerror or exc}; give a script "
                             f"that each job sources before aorta starts on the node") from None
        if not stat.S_ISREG(mode):
            raise SetupError(f"executor.setup: {path} is not a regular file; give a script "
                             f"(for example one that runs `module load rocm`)")
        if not os.access(path, os.R_OK):
            raise SetupError(f"executor.setup: {path} is not readable; fix its permissions")
        found.append(str(path))
    return tuple(found)


def job_script(comment: Sequence[str], setup: Sequence[str], argv: Sequence[str]) -> str:
    """A batch script: `comment` lines, then each setup script sourced in order (a failing
    one ends the job with exit 2 and a line on its stderr), then `exec argv`."""
    lines = ["#!/bin/bash" if setup else "#!/bin/sh"]
    lines += [f"# {line}" for line in comment]
    for path in setup:
        quoted = shlex.quote(path)
        # `.`, the POSIX spelling of bash's `source`.
        lines.append(f". {quoted} || {{ rc=$?; printf 'aorta: error: executor.setup "
                     f"script %s failed (exit %s)\\n' {quoted} \"$rc\" >&2; exit 2; }}")
    lines.append("exec " + " ".join(shlex.quote(arg) for arg in argv))
    return "\n".join(lines) + "\n"
