"""The table of collectors: built-ins by import path (loaded lazily), plus plug-ins.

Third-party collectors register through the `aorta.collectors` entry point group; each entry
point names a `Collector` subclass. A plug-in is checked when it loads, naming what is wrong.
"""

from __future__ import annotations

import importlib
import importlib.util
from functools import cache

from aorta.collectors.base import Collector
from aorta.collectors.builtin import BUILTIN
from aorta.errors import UserError

__all__ = ["BUILTIN", "names", "get", "wrap_order"]


@cache
def _plugins() -> dict[str, str]:
    from importlib.metadata import entry_points

    found = {}
    for ep in entry_points(group="aorta.collectors"):
        if ep.name not in BUILTIN:
            found[ep.name] = ep.value
    return found


def _table() -> dict[str, str]:
    return {**{n: p for n, p in BUILTIN.items() if _importable(p)}, **_plugins()}


def _importable(path: str) -> bool:
    # Built-ins land one module at a time; a name whose module is absent is not offered.
    module = path.split(":")[0]
    return importlib.util.find_spec(module) is not None


def names() -> list[str]:
    """Every registered collector name, sorted."""
    return sorted(_table())


@cache
def get(name: str) -> Collector:
    """The collector called `name`; `UserError` listing the known names if there is none."""
    table = _table()
    if name not in table:
        raise UserError(f"unknown collector {name!r}; known: {', '.join(sorted(table))}")
    module_name, _, attr = table[name].partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    _check(name, cls)
    collector: Collector = cls()
    return collector


def _check(name: str, cls: type) -> None:
    if not (isinstance(cls, type) and issubclass(cls, Collector)):
        raise UserError(f"collector {name!r}: {cls!r} is not a aorta Collector subclass")
    for attr in ("name", "wrap_rank", "options_model"):
        if not hasattr(cls, attr):
            raise UserError(f"collector {name!r}: class {cls.__name__} does not set {attr!r}")
    if cls.name != name:
        raise UserError(f"collector {name!r}: class {cls.__name__} calls itself {cls.name!r}")


def wrap_order(selected: list[str]) -> list[str]:
    """`selected` outermost first: by `wrap_rank`, then by the order given."""
    return sorted(selected, key=lambda n: (get(n).wrap_rank, selected.index(n)))
