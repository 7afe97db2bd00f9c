"""The one compiled kernel, optional: an install without a C compiler still works (aorta then
runs the pure-Python code it mirrors, and the tests hold both to the same answers). Everything
else about the package is in pyproject.toml."""

import sys

from setuptools import Extension, setup

_FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]  # no fused multiply-add

setup(ext_modules=[
    # compare's exact interval: the quantile search of stats/ratio_grid.py
    Extension("aorta.stats._ratio_quantiles", ["src/aorta/stats/_ratio_quantiles.c"],
              optional=True, extra_compile_args=_FLAGS),
])
