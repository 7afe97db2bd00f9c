"""CI builds every compiled kernel of setup.py, so their tests run there; elsewhere an install
without a C compiler is legal and those tests skip (aorta runs the Python code they mirror)."""

from __future__ import annotations

import importlib
import os

import pytest


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI must have a C compiler")
@pytest.mark.parametrize("module", ["aorta.comparison._ratio_quantiles",
                                    "aorta.parsers._rocprof_scan"])
def test_ci_built_the_compiled_kernel(module: str) -> None:
    importlib.import_module(module)
