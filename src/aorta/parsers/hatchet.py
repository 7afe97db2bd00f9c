"""Reading Proton's `.hatchet` call trees (JSON) into per-kernel and per-scope totals.

A file is a list: the tree root, then metadata elements (a bare root dict is accepted too):

    [{"frame": {"name": "ROOT", "type": "function"}, "metrics": {},
      "children": [{"frame": {"name": "add_kernel", "type": "function"},
                    "metrics": {"count": 10, "device_id": "0", "device_type": "CUDA",
                                "time (ns)": 22718},
                    "children": []}]},
     {"CUDA": {"0": {"arch": "90", "num_sms": 132, ...}}}]

Only leaf frames below the root count. A kernel leaf holds an *exclusive* `time (<unit>)`
(ns, us, ms or s) and a launch `count`; columns that are not exactly `time (<unit>)`, such as
`cpu_time (ns)` or the viewer's inclusive `time (ns) (inc)`, are ignored. Leaves of the
`instrumentation` backend carry `cycles` (and `normalized_cycles`) per intra-kernel scope.

Format: triton-lang/triton `third_party/proton/csrc/lib/Data/Dump/TreeDataHatchetDump.cpp`.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.skips import Skips

_TIME_KEY = re.compile(r"^\s*time\s*\(\s*(ns|us|ms|s)\s*\)\s*$", re.IGNORECASE)
_NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class _Unusable:
    """A metric that is present but cannot be trusted (NaN, negative, overflowing, not a number)."""

    def __init__(self, why: str) -> None:
        self.why = why


def read_json_file(path: Path) -> Any:
    """Parse `path` as JSON, opening it only if it is a regular file (no symlink, no FIFO).

    Raises `ValueError` naming the file for anything that is not readable JSON.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot open ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise ValueError(f"{path.name}: not a regular file")
        try:
            return json.load(fh)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{path.name}: not JSON ({exc})") from None
        except RecursionError:
            raise ValueError(f"{path.name}: nested too deeply to read") from None
        except OSError as exc:
            raise ValueError(f"{path.name}: cannot read ({exc.strerror or exc})") from None


def _number(value: Any) -> float | _Unusable:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _Unusable(f"not a number ({value!r})")
    try:
        number = float(value)
    except OverflowError:
        return _Unusable("too large for a float")
    if not math.isfinite(number):
        return _Unusable(f"not finite ({number})")
    if number < 0:
        return _Unusable(f"negative ({number})")
    return number


def leaf_time_ns(metrics: dict[str, Any]) -> float | _Unusable | None:
    """The first usable `time (<unit>)` column in ns; `_Unusable` when every one is bad; None
    when the leaf has no time column (it is not a timed kernel)."""
    bad: _Unusable | None = None
    for key, value in metrics.items():
        match = _TIME_KEY.match(key) if isinstance(key, str) else None
        if match is None:
            continue
        number = _number(value)
        if isinstance(number, _Unusable):
            bad = _Unusable(f"{key.strip()} is {number.why}")
            continue
        ns = number * _NS_PER_UNIT[match.group(1).lower()]
        if math.isfinite(ns):
            return ns
        bad = _Unusable(f"{key.strip()} overflows once converted to ns")
    return bad


def leaf_count(metrics: dict[str, Any]) -> int | None:
    """The launch count, or None when it is missing or cannot be trusted (negative, NaN,
    fractional, not a number): an untrusted count is never rounded into a trusted one."""
    number = _number(metrics.get("count"))
    if isinstance(number, _Unusable) or number != int(number):
        return None
    return int(number)


@dataclass
class HatchetSummary:
    """Totals over one or more `.hatchet` files; add each with `add_file`.

    `kernels`: per kernel name (leaves of one name in several places merge), times in ns.
    `scope_cycles`: per intra-kernel scope name, summed `cycles` (GPU clock cycles).
    `skips`: frames left out (a node that is not an object, a `frame`, `name`, `metrics` or
    `children` of the wrong type, a time or cycles value that cannot be trusted, a launch
    count that cannot; the time of the last is kept), each an undercount of the totals.
    """

    kernels: KernelTable = field(default_factory=KernelTable)
    scope_cycles: dict[str, float] = field(default_factory=dict)
    files: int = 0
    frames: int = 0                 # frames below the root, over every file
    skips: Skips = field(default_factory=Skips)

    @property
    def unusable(self) -> int:
        return self.skips.count

    def add_file(self, path: Path) -> None:
        """Add one file. Raises `ValueError` (naming the file) if it is not a hatchet tree."""
        self.add_document(read_json_file(path), path.name)

    def add_document(self, doc: Any, label: str = "<document>") -> None:
        root = _root(doc)
        if root is None:
            raise ValueError(f"{label}: no hatchet tree (expected a list whose first element "
                             f"is the root frame, or a root frame)")
        self.files += 1
        stack = list(reversed(self._children(root, label)))   # depth first, in document order
        while stack:
            node = stack.pop()
            self.frames += 1
            if not isinstance(node, dict):
                self.skips.skip(f"{label}: a frame that is {_kind(node)}, not an object")
                continue
            children = self._children(node, label)
            if children:
                stack.extend(reversed(children))
            else:
                self._add_leaf(node, label)

    def _children(self, node: dict[str, Any], label: str) -> list[Any]:
        children = node.get("children", [])
        if isinstance(children, list):
            return children
        self.skips.skip(f"{label}: {_name(node)!r} has children {_kind(children)}, not a list")
        return []

    def _add_leaf(self, node: dict[str, Any], label: str) -> None:
        frame, metrics = node.get("frame"), node.get("metrics", {})
        name = frame.get("name") if isinstance(frame, dict) else None
        if not isinstance(frame, dict):
            self.skips.skip(f"{label}: a leaf whose frame is {_kind(frame)}, not an object")
            return
        if not isinstance(name, str) or not name:
            self.skips.skip(f"{label}: a leaf whose frame name is {_kind(name)}")
            return
        if not isinstance(metrics, dict):
            self.skips.skip(f"{label}: {name!r} has metrics {_kind(metrics)}, not an object")
            return
        if "cycles" in metrics:
            cycles = _number(metrics["cycles"])
            if isinstance(cycles, _Unusable):
                self.skips.skip(f"{name!r}: cycles is {cycles.why}")
            else:
                self.scope_cycles[name] = self.scope_cycles.get(name, 0.0) + cycles
        time_ns = leaf_time_ns(metrics)
        if time_ns is None:
            if "count" in metrics:
                self.skips.skip(f"{name!r}: has launches (count) but no time column")
            return
        if isinstance(time_ns, _Unusable):
            self.skips.skip(f"{name!r}: {time_ns.why}")
            return
        count = leaf_count(metrics)
        if count is None:
            self.skips.skip(f"{name!r}: count is {_kind(metrics.get('count'))} (the time is "
                            f"kept, the count is not)")
        if count == 0 and time_ns == 0:
            return              # a frame that recorded nothing, not a launch
        self.kernels.add(name, time_ns, count)


def _root(doc: Any) -> dict[str, Any] | None:
    if isinstance(doc, list):
        doc = doc[0] if doc else None
    if isinstance(doc, dict) and ("frame" in doc or "children" in doc):
        return doc
    return None


def _name(node: dict[str, Any]) -> Any:
    frame = node.get("frame")
    return frame.get("name") if isinstance(frame, dict) else None


def _kind(value: Any) -> str:
    if value is None:
        return "missing or null"
    text = repr(value)
    return f"a {type(value).__name__} ({text if len(text) <= 40 else text[:37] + '...'})"
