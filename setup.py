"""Compiled parts, all optional: an install without a C compiler still works (aorta then reads
with its pure-Python fallbacks). Everything else about the package is in pyproject.toml."""

from setuptools import Extension, setup

setup(ext_modules=[
    # rocprofv3 kernel traces, read as rocprof_trace_scan reads them (rocprof_trace_c.py)
    Extension("aorta.parsers._rocprof_scan", ["src/aorta/parsers/_rocprof_scan.c"],
              optional=True),
])
