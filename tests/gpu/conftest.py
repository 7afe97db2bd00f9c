"""GPU tests: every test here is marked `gpu` and skipped cleanly where no GPU is present."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache

import pytest


@cache
def gpu_present() -> str | None:
    """A reason to skip, or None when a GPU is visible."""
    if os.path.exists("/dev/kfd"):
        return None
    if shutil.which("nvidia-smi") is None:
        return "no GPU: neither /dev/kfd nor nvidia-smi"
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"no GPU: nvidia-smi failed ({exc})"
    return None if out.returncode == 0 and "GPU" in out.stdout else "no GPU: nvidia-smi lists none"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/gpu/" in str(item.fspath).replace(os.sep, "/"):
            item.add_marker(pytest.mark.gpu)
            reason = gpu_present()
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))
