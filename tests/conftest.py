"""Fixtures shared by every test directory."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest


@pytest.fixture
def payload(tmp_path: Path):
    """Write a small Python payload script into tmp_path and return its path."""

    def make(body: str, name: str = "payload.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(body))
        return path

    return make
