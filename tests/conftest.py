"""Fixtures shared by every test directory, and the markers for what a bare machine lacks.

`pip install -e '.[test]'` is all the suite needs: a test that also needs PyTorch, Slurm,
PostgreSQL or Chromium skips without it and carries a marker, so that `.ci/run` can run the
suite on a bare machine first and then, with those installed, only
`-m "torch or slurm or postgres or browser"`. The markers come from the fixtures a test takes
(`slurm`, `db_url`'s PostgreSQL case, `browser_context`); a test that needs torch says
`@pytest.mark.torch`, which also skips it where torch is not installed.
"""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import pytest

HAS_TORCH = importlib.util.find_spec("torch") is not None


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        fixtures = getattr(item, "fixturenames", ())
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "slurm" in fixtures:
            item.add_marker(pytest.mark.slurm)
        if params.get("db_url") == "postgresql":
            item.add_marker(pytest.mark.postgres)
        if "browser_context" in fixtures:
            item.add_marker(pytest.mark.browser)
        if item.get_closest_marker("torch") and not HAS_TORCH:
            item.add_marker(pytest.mark.skip(reason="torch is not installed for the tests' "
                                             "Python (CI installs its CPU build)"))


@pytest.fixture
def payload(tmp_path: Path):
    """Write a small Python payload script into tmp_path and return its path."""

    def make(body: str, name: str = "payload.py") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(body))
        return path

    return make
