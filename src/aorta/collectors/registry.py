"""The table of collectors: every collector, built-in or third-party, is an entry point of the
`aorta.collectors` group naming a `Collector` subclass (aorta's own are declared in its
pyproject.toml). A collector is loaded when it is first asked for, and checked then, naming
what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from pydantic import BaseModel

from aorta.base.errors import UserError
from aorta.collectors.base import Capability, Collector

GROUP = "aorta.collectors"


class BrokenCollectorError(UserError):
    """A registered collector that cannot be loaded or breaks the contract: the plug-in's
    fault. `aorta collectors` and `aorta doctor` list it as not usable with this message."""


PLUGIN_FIX = ("fix or uninstall the package that registers it (entry-point group "
              "aorta.collectors); other collectors are not affected")


def _broken(name: str, problem: str) -> BrokenCollectorError:
    return BrokenCollectorError(f"collector {name!r}: {problem}")


@contextmanager
def plugin_fault(name: str, what: str) -> Iterator[None]:
    """An unexpected exception from collector `name`'s `what` becomes a one-line
    `BrokenCollectorError` naming both: a plug-in's bug is reported as the plug-in's."""
    try:
        yield
    except UserError:
        raise
    except Exception as exc:
        raise _broken(name, f"its {what} failed: {type(exc).__name__}: {exc}") from None


def capability(name: str) -> Capability:
    """Whether `name` can measure here (its probe). A collector that cannot be loaded, or
    whose probe raises, is not usable with that reason: it must not hide the others."""
    try:
        collector = get(name)
        with plugin_fault(name, "probe"):
            return collector.probe()
    except BrokenCollectorError as exc:
        return Capability(name, False, reason=str(exc), fix=PLUGIN_FIX)


@cache
def _table() -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group=GROUP):
        found.setdefault(ep.name, ep)      # the first distribution on sys.path wins
    return found


def names() -> list[str]:
    return sorted(_table())


@cache
def get(name: str) -> Collector[Any]:
    """The collector called `name`; `UserError` listing the known names if there is none,
    `BrokenCollectorError` if it is registered but cannot be used."""
    table = _table()
    if name not in table:
        known = ", ".join(sorted(table)) or ("none: aorta's own collectors are registered when "
                                             "it is installed (pip install -e .)")
        raise UserError(f"unknown collector {name!r}; known: {known}")
    try:
        cls = table[name].load()
    except Exception as exc:   # a plug-in that cannot even import is the plug-in's fault
        raise _broken(name, f"{table[name].value} cannot be loaded: "
                            f"{type(exc).__name__}: {exc}") from None
    _check(name, cls)
    try:
        collector: Collector[Any] = cls()
    except Exception as exc:   # e.g. an abstract method left out
        raise _broken(name, f"class {cls.__name__} cannot be created: "
                            f"{type(exc).__name__}: {exc}") from None
    return collector


def _check(name: str, cls: Any) -> None:
    """The contract's class attributes, checked once, naming the collector and the field."""
    if not (isinstance(cls, type) and issubclass(cls, Collector)):
        raise _broken(name, f"{cls!r} is not an aorta Collector subclass")
    for attr, kind, what in (("name", str, "a string"), ("wrap_rank", int, "an integer")):
        if not isinstance(getattr(cls, attr, None), kind):
            raise _broken(name, f"class {cls.__name__} does not set {attr!r} to {what}")
    if cls.name != name:
        raise _broken(name, f"class {cls.__name__} calls itself {cls.name!r}")
    model = cls.options_model
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise _broken(name, f"class {cls.__name__}'s options_model {model!r} is "
                            f"not a pydantic model (subclass CollectorOptions)")


def wrap_order(selected: list[str]) -> list[str]:
    """`selected` outermost first: by `wrap_rank`, then by the order given."""
    return sorted(selected, key=lambda n: (get(n).wrap_rank, selected.index(n)))
