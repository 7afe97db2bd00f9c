"""Compiled kernels, all optional: an install without a C compiler still works (aorta then runs
the pure-Python code they mirror, and the tests hold both to the same answers). Everything else
about the package is in pyproject.toml."""

import sys

from setuptools import Extension, setup

_FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]  # no fused multiply-add

setup(ext_modules=[
    # compare's exact interval: the quantile search of comparison/ratio_grid.py
    Extension("aorta.comparison._ratio_quantiles", ["src/aorta/comparison/_ratio_quantiles.c"],
              optional=True, extra_compile_args=_FLAGS),
    # rocprofv3 kernel traces, read as rocprof_trace_scan reads them (rocprof_trace_c.py)
    Extension("aorta.parsers._rocprof_scan", ["src/aorta/parsers/_rocprof_scan.c"],
              optional=True),
])
