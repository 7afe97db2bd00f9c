"""aorta: run a command under GPU profilers over a matrix of variants and trust the numbers.

Importing this package is cheap on purpose: the CLI, the schema library and every profiler
binding load lazily, where they are used. The Python API (docs/api.md) loads on first use:

    import aorta
    run = aorta.open_run("aorta_results/quickstart")
    run.trials_frame()
    aorta.compare("results/before", "results/after")
"""

from __future__ import annotations

from typing import Any

from aorta.base.version import VERSION as __version__

__all__ = ["__version__", "open_run", "compare", "API_VERSION"]

_API = {"open_run", "compare", "API_VERSION", "Run", "Trial"}


def __getattr__(name: str) -> Any:
    if name in _API:
        from aorta.api import run

        return getattr(run, name)
    raise AttributeError(f"module 'aorta' has no attribute {name!r}")
