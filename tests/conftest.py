"""Shared test helpers: running the real `aorta` CLI in a subprocess, writing recipes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def run_aorta(*args: str, cwd: Path | None = None, timeout: float = 120,
              env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m aorta ARGS` as a user would run it; never raises on a non-zero exit."""
    return subprocess.run([sys.executable, "-m", "aorta", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout, check=False)


def write_recipe(directory: Path, text: str, name: str = "recipe.yaml") -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text))
    return path


def trial_result(run_dir: Path, cell: str, index: int) -> dict[str, Any]:
    return json.loads((run_dir / "cells" / cell / f"trial_{index}" / "result.json").read_text())


@pytest.fixture
def payload(tmp_path: Path):
    """Write a small Python payload script into tmp_path and return its path."""

    def make(body: str, name: str = "payload.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(body))
        return path

    return make
