"""aorta: run a command under GPU profilers over a matrix of variants and trust the numbers.

Importing this package is cheap on purpose: the Python API (docs/api.md) loads on first use.

    import aorta
    run = aorta.sweep("recipe.yaml", command=["python3", "bench.py"], output="results")
    run = aorta.open_run("results/bench")
    run.trials_frame()
    aorta.compare("results/before", "results/after")
"""

from __future__ import annotations

from aorta.base.version import VERSION as __version__

__all__ = ["__version__", "sweep", "plan", "open_run", "compare", "Run", "Trial", "API_VERSION"]

# Each name loads its module when first asked for: reading a run needs no schema library.
_WHERE = {"sweep": "aorta.api.sweep", "plan": "aorta.api.sweep"} | dict.fromkeys(
    ("open_run", "compare", "Run", "Trial", "API_VERSION"), "aorta.api.run")


def __getattr__(name: str) -> object:
    if name in _WHERE:
        import importlib

        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module 'aorta' has no attribute {name!r}")
