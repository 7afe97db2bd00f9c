"""Where this aorta was imported from, for child processes that must import it too."""

from __future__ import annotations

import os
import site
import sysconfig
from functools import cache


@cache
def aorta_root() -> str | None:
    """The directory holding the `aorta` package, or None when it is installed in a site dir
    (a child Python then finds it by itself)."""
    here = os.path.abspath(__file__)                      # <root>/aorta/base/source_tree.py
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    site_dirs = {*site.getsitepackages(), site.getusersitepackages(),
                 *(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))}
    return None if root in {os.path.abspath(p) for p in site_dirs} else root
