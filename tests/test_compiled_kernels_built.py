"""CI builds the compiled kernel of setup.py, so its tests run there; elsewhere an install
without a C compiler is legal and those tests skip (aorta runs the Python code it mirrors)."""

from __future__ import annotations

import importlib
import os

import pytest


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI must have a C compiler")
def test_ci_built_the_compiled_kernel() -> None:
    importlib.import_module("aorta.stats._ratio_quantiles")
