"""Compiled kernels, each optional: an install without a C compiler keeps the pure-Python
code they mirror (the tests check that both give the same answers)."""

import sys

from setuptools import Extension, setup

_FLAGS = [] if sys.platform == "win32" else ["-O2", "-ffp-contract=off"]  # no fused multiply-add

setup(ext_modules=[
    Extension("aorta.comparison._ratio_quantiles", ["src/aorta/comparison/_ratio_quantiles.c"],
              optional=True, extra_compile_args=_FLAGS),
])
