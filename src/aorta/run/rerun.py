"""`rerun.sh`: one trial's exact launch, runnable without aorta, with no credential in it: a
credential comes from the caller's environment (`NAME="${NAME:?...}"`, or
`"${AORTA_ARG_<i>:?...}"` for an argument, with a comment saying which to supply).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterable

from aorta.base.redaction import Redactor, looks_secret
from aorta.collectors.base import Launch
from aorta.run.launch import CLEAN_ENV_KEEP


def rerun_script(launch: Launch, dirs: Iterable[str], env_mode: str, redactor: Redactor) -> str:
    lines = ["#!/bin/sh", "# Reproduces this trial outside aorta: the same argv and environment.",
             f"cd {shlex.quote(os.getcwd())} || exit 1"]
    lines += [f"mkdir -p {shlex.quote(d)}" for d in dirs]
    env_args = ["env"]
    if env_mode == "clean":
        env_args += ["-i", *(f'{k}="${{{k}}}"' for k in CLEAN_ENV_KEEP)]
    env_args += [f"-u {shlex.quote(name)}" for name in sorted(launch.unset)]
    env_args += [_assignment(k, v, redactor) for k, v in launch.env.items()]
    shown = redactor.argv(launch.argv)
    argv = []
    for i, (arg, recorded) in enumerate(zip(launch.argv, shown)):
        if arg == recorded:
            argv.append(shlex.quote(arg))
        else:
            lines.append(f"# set AORTA_ARG_{i} to argument {i} of the command: it holds a "
                         f"credential, which aorta does not write down")
            argv.append(f'"${{AORTA_ARG_{i}:?set AORTA_ARG_{i}}}"')
    lines.append("exec " + " ".join(env_args) + " " + " ".join(argv))
    return "\n".join(lines) + "\n"


def _assignment(key: str, value: str, redactor: Redactor) -> str:
    if looks_secret(key) or redactor.text(value) != value:
        return f'{key}="${{{key}:?set {key}}}"'
    return f"{key}={shlex.quote(value)}"
