"""Slurm tests need a running controller with an idle node (`bash scripts/slurm-local.sh`
starts one on this machine); without it they skip, saying why."""

from __future__ import annotations

import shutil
import subprocess

import pytest


def slurm_unavailable() -> str | None:
    """Why no Slurm job can run here, or None when a node is ready."""
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return "Slurm's commands are not installed (bash scripts/slurm-local.sh installs them)"
    try:
        proc = subprocess.run(["sinfo", "-h", "-N", "-o", "%T"], capture_output=True,
                              text=True, timeout=20, check=False)
    except subprocess.TimeoutExpired:
        return "sinfo did not answer within 20 s"
    if proc.returncode != 0:
        return f"sinfo failed: {proc.stderr.strip()} (is slurmctld up?)"
    if not {"idle", "mixed"} & set(proc.stdout.split()):
        return f"no Slurm node is idle (sinfo says: {' '.join(proc.stdout.split()) or 'none'})"
    return None


@pytest.fixture(scope="session")
def slurm() -> None:
    reason = slurm_unavailable()
    if reason is not None:
        pytest.skip(reason)
