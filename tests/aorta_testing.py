"""Test helpers: running the real `aorta` CLI in a subprocess, writing recipes, reading results."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_aorta(*args: str, cwd: Path | None = None, timeout: float = 120,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m aorta ARGS` as a user would run it; never raises on a non-zero exit.

    The child finds this checkout's `aorta` even when it is not installed."""
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO / "src"), env.get("PYTHONPATH")]))
    return subprocess.run([sys.executable, "-m", "aorta", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


#: Runs `python ARGS` with the default action of SIGINT and of the signals that stop a job
#: restored first: a test started from a non-interactive shell inherits SIGINT ignored (and
#: from `nohup`, SIGHUP), and those signals must still reach aorta.
_SIGINT_DEFAULT = ("import os, signal, sys\n"
                   "for name in ('SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR1'):\n"
                   "    signal.signal(getattr(signal, name), signal.SIG_DFL)\n"
                   "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def interruptible(argv: list[str]) -> list[str]:
    """`argv` (which starts with `sys.executable`) run so that SIGINT (and SIGTERM, SIGHUP,
    SIGQUIT, SIGUSR1) interrupt it even when this test process ignores them; no preexec_fn,
    so it is safe with threads."""
    if not argv or argv[0] != sys.executable:
        raise ValueError("interruptible() takes an argv that starts with sys.executable")
    return [sys.executable, "-c", _SIGINT_DEFAULT, *argv[1:]]


def write_recipe(directory: Path, text: str, name: str = "recipe.yaml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def trial_result(run_dir: Path, cell: str, index: int) -> dict[str, Any]:
    return json.loads((run_dir / "cells" / cell / f"trial_{index}" / "result.json").read_text())


def flat_metrics(result: dict[str, Any]) -> dict[str, Any]:
    """A result.json's metrics with each capture spelled out as metrics again
    (`<c>_capture`, `<c>_capture_reason`, `<c>_skipped`, and what the collector resolved),
    so that assertions read as they do on a collector's own `summarize()` output."""
    flat = dict(result.get("metrics") or {})
    for name, capture in (result.get("captures") or {}).items():
        flat.update(capture.get("resolved") or {})
        flat[f"{name}_capture"] = capture["state"]
        if capture.get("reason"):
            flat[f"{name}_capture_reason"] = capture["reason"]
        if capture.get("skipped") is not None:
            flat[f"{name}_skipped"] = capture["skipped"]
    return flat


def bare_python(directory: Path) -> Path:
    """A real interpreter without torch or triton: a fresh venv (no pip, no system site
    packages) of the Python running the tests, made in `directory`."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True,
                   capture_output=True, timeout=120)
    python = directory / "bin" / "python3"
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True,
                           timeout=60, check=False)
    assert probe.returncode != 0, f"{python} imports torch: it cannot stand for a bare Python"
    return python


def bin_dir_with_python(directory: Path, python: Path) -> Path:
    """A directory holding `python3` and `python` links to `python`, to put first on PATH."""
    directory.mkdir(parents=True, exist_ok=True)
    for name in ("python3", "python"):
        (directory / name).symlink_to(python)
    return directory


#: What `nvidia-smi -L` prints on a host with two GPUs, the first split into two MIG instances.
NVIDIA_SMI_L = """\
GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5a4c2c5e-0b1d-8a3e-7f21-3c9d4e5f6a7b)
  MIG 3g.40gb     Device  0: (UUID: MIG-6e4d0a4b-1c2d-5e6f-8a9b-0c1d2e3f4a5b)
  MIG 3g.40gb     Device  1: (UUID: MIG-7f5e1b5c-2d3e-6f70-9bac-1d2e3f4a5b6c)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5)
"""


def fake_nvidia_smi(directory: Path, listing: str = NVIDIA_SMI_L, code: int = 0) -> dict[str, str]:
    """An environment whose PATH starts with a directory holding an `nvidia-smi` that answers
    `-L` with `listing` and exit `code` (and any other question with exit 9), as a GPU host's
    would; /dev/kfd must be absent for aorta to ask it (`pytest.skip` otherwise)."""
    if os.path.exists("/dev/kfd"):
        pytest.skip("/dev/kfd exists: aorta lists the AMD GPUs here, not nvidia-smi's")
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "listing").write_text(listing)
    tool = directory / "nvidia-smi"
    tool.write_text(f"#!/bin/sh\n[ \"$1\" = -L ] || exit 9\ncat '{directory / 'listing'}'\n"
                    f"exit {code}\n")
    tool.chmod(0o755)
    return {**os.environ, "PATH": f"{directory}{os.pathsep}{os.environ.get('PATH', '')}"}


def session_leaver(directory: Path) -> tuple[Path, Path]:
    """(a tool, its marker file): the tool starts a descendant that leaves the tool's session
    (setsid), keeps its stdout and stderr open for 30 s and writes its pid to the marker; the
    tool itself sleeps 30 s. What the caller kills of the tool's session leaves that one."""
    marker = directory / "escaped.pid"
    tool = directory / "session-leaver"
    tool.write_text(f"#!/bin/sh\nsetsid sh -c 'echo $$ > {marker}; exec sleep 30' &\n"
                    f"sleep 30\n")
    tool.chmod(0o755)
    return tool, marker


def install_plugin(site: Path, module: str, source: str, collectors: dict[str, str]) -> Path:
    """A third-party distribution in `site` as pip leaves one: `module`.py holding `source`,
    and a dist-info whose entry points register `collectors` (name -> "module:Class") in the
    `aorta.collectors` group. Put `site` on sys.path (or PYTHONPATH) to install it."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{module}-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[aorta.collectors]\n" + "".join(f"{n} = {v}\n" for n, v in collectors.items()))
    return site


@contextmanager
def small_filesystem(mount: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of `size` mounted on `mount` (created) for the test's length, to fill on
    purpose. Mounting needs the privilege to: the test is skipped, with the reason, without it."""
    mount.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}",
                           f"aorta-{uuid.uuid4().hex[:8]}", str(mount)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode}): "
                    "the full-disk tests need that privilege")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
