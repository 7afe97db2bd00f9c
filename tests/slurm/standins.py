"""Stand-in profiler tools for the remote-probe tests: an `ncu` that runs the payload and
leaves its log, and an `nvidia-smi` that lists a GPU (or, with `gpu=False`, none), so that
the ncu collector's check passes (or fails) on a machine without an NVIDIA GPU."""

from __future__ import annotations

import stat
from pathlib import Path

NCU = """#!/usr/bin/env python3
import os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Version 2025.3.1.0 (build 36398880) (public-release)")
    sys.exit(0)
if "--log-file" in args:   # the last option aorta gives; the payload follows it
    at = args.index("--log-file")
    with open(args[at + 1], "w") as log:
        log.write("==PROF== stand-in ncu ran on %s\\n" % os.uname().nodename)
    os.execvp(args[at + 2], args[at + 2:])
sys.exit(2)
"""

SMI_GPU = "#!/bin/sh\necho 'GPU 0: Stand-in GPU (UUID: GPU-00000000-0000-0000-0000-000000000000)'\n"
SMI_NONE = "#!/bin/sh\necho 'No devices were found'\nexit 6\n"


def _executable(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def standin_tools(folder: Path, ncu: bool = True, gpu: bool = True) -> Path:
    """`folder` holding the stand-ins asked for; put it first on PATH."""
    if ncu:
        _executable(folder / "ncu", NCU)
    _executable(folder / "nvidia-smi", SMI_GPU if gpu else SMI_NONE)
    return folder


def path_setup(script: Path, folder: Path) -> Path:
    """A setup script that puts `folder` first on PATH, as `module load` would."""
    script.write_text(f'export PATH="{folder}:$PATH"\n')
    return script
