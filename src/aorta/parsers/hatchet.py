"""Reading Proton's `.hatchet` call trees (JSON) into per-kernel and per-scope totals.

A file is a list: the tree root, then metadata elements (a bare root dict is accepted too):

    [{"frame": {"name": "ROOT", "type": "function"}, "metrics": {},
      "children": [{"frame": {"name": "add_kernel", "type": "function"},
                    "metrics": {"count": 10, "device_id": "0", "device_type": "CUDA",
                                "time (ns)": 22718},
                    "children": []}]},
     {"CUDA": {"0": {"arch": "90", "num_sms": 132, ...}}}]

Only leaves below the root count: an *exclusive* `time (<unit>)` and a launch `count` per kernel,
or `cycles` per intra-kernel scope (`instrumentation`); older Proton spells `Time (ns)`, `Count`.
`__proton_launch_metadata` subtrees (Proton's own bookkeeping) are dropped, as proton-viewer's
`remove_frames` does. Other columns: docs/collectors/proton.md.
Format: triton-lang/triton `third_party/proton/csrc/lib/Data/Dump/TreeDataHatchetDump.cpp`.
"""

from __future__ import annotations

import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aorta.parsers.json_stream import open_regular
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.skips import Skips, kind

_TIME_KEY = re.compile(r"^\s*time\s*\(\s*(ns|us|ms|s)\s*\)\s*$", re.IGNORECASE)
_NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
METADATA_FRAME = "__proton_launch_metadata"     # triton.profiler COMPUTE_METADATA_SCOPE_NAME


def read_json_file(path: Path) -> Any:
    """Parse `path` as JSON, opening it only if it is a regular file (no symlink, no FIFO).
    Raises `ValueError` naming the file for anything that is not readable JSON."""
    try:
        with open_regular(path, os.O_NOFOLLOW) as fh:
            return json.load(fh)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name}: not JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{path.name}: nested too deeply to read") from None
    except OSError as exc:
        raise ValueError(f"{path.name}: cannot open or read ({exc.strerror or exc})") from None


def _number(value: Any) -> float | str:
    """A finite, non-negative number, or why the value cannot be trusted as one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return f"not a number ({value!r})"
    try:
        number = float(value)
    except OverflowError:
        return "too large for a float"
    if not math.isfinite(number):
        return f"not finite ({number})"
    if number < 0:
        return f"negative ({number})"
    return number


def leaf_time_ns(metrics: dict[str, Any]) -> float | str | None:
    """The first usable `time (<unit>)` column in ns; why not (a str) when every one is bad;
    None when the leaf has no time column (it is not a timed kernel)."""
    bad: str | None = None
    for key, value in metrics.items():
        match = _TIME_KEY.match(key) if isinstance(key, str) else None
        if match is None:
            continue
        number = _number(value)
        if isinstance(number, str):
            bad = f"{key.strip()} is {number}"
            continue
        ns = number * _NS_PER_UNIT[match.group(1).lower()]
        if math.isfinite(ns):
            return ns
        bad = f"{key.strip()} overflows once converted to ns"
    return bad


def leaf_count(metrics: dict[str, Any]) -> int | None:
    """The launch count, or None when it is missing or cannot be trusted (negative, NaN,
    fractional, not a number): an untrusted count is never rounded into a trusted one."""
    number = _number(metrics.get("count"))
    return None if isinstance(number, str) or number != int(number) else int(number)


@dataclass
class HatchetSummary:
    """Totals over one or more `.hatchet` files, added with `add_file`: per kernel name (leaves
    of one name in several places merge; ns), per intra-kernel scope (summed `cycles`), and
    the frames left out (`skips`; a frame whose count alone is untrusted keeps its time)."""

    kernels: KernelTable = field(default_factory=KernelTable)
    scope_cycles: dict[str, float] = field(default_factory=dict)
    files: int = 0
    frames: int = 0                 # frames below the root, over every file
    metadata_frames: int = 0        # launch-metadata frames dropped with their subtrees
    skips: Skips = field(default_factory=Skips)

    def add_file(self, path: Path) -> None:
        """Add one file. Raises `ValueError` (naming the file) if it is not a hatchet tree."""
        self.add_document(read_json_file(path), path.name)

    def add_document(self, doc: Any, label: str = "<document>") -> None:
        root = doc[0] if isinstance(doc, list) and doc else doc
        if not (isinstance(root, dict) and ("frame" in root or "children" in root)):
            raise ValueError(f"{label}: no hatchet tree (expected a list whose first element "
                             f"is the root frame, or a root frame)")
        self.files += 1
        stack = list(reversed(self._children(root, label) or []))  # depth first, in order
        while stack:
            node = stack.pop()
            self.frames += 1
            if not isinstance(node, dict):
                self.skips.skip(f"{label}: a frame that is {_kind(node)}, not an object")
                continue
            if children := self._children(node, label):
                stack.extend(reversed(children))
            elif children is not None:
                self._add_leaf(node, label)

    def _children(self, node: dict[str, Any], label: str) -> list[Any] | None:
        """The children that count; None when all were launch-metadata frames (then no leaf)."""
        children = node.get("children", [])
        if not isinstance(children, list):
            self.skips.skip(f"{label}: {_name(node)!r} has children {_kind(children)}, not a list")
            return []
        kept = [child for child in children
                if str(_name(child)).partition(":")[0] != METADATA_FRAME]
        self.metadata_frames += len(children) - len(kept)
        return kept if kept or not children else None

    def _add_leaf(self, node: dict[str, Any], label: str) -> None:
        frame, metrics, name = node.get("frame"), node.get("metrics", {}), _name(node)
        if not isinstance(frame, dict):
            self.skips.skip(f"{label}: a leaf whose frame is {_kind(frame)}, not an object")
            return
        if not isinstance(name, str) or not name:
            self.skips.skip(f"{label}: a leaf whose frame name is {_kind(name)}")
            return
        if not isinstance(metrics, dict):
            self.skips.skip(f"{label}: {name!r} has metrics {_kind(metrics)}, not an object")
            return
        if "Count" in metrics and "count" not in metrics:     # older Proton's spelling
            metrics = {**metrics, "count": metrics["Count"]}
        if "cycles" in metrics:
            cycles = _number(metrics["cycles"])
            if isinstance(cycles, str):
                self.skips.skip(f"{name!r}: cycles is {cycles}")
            else:
                self.scope_cycles[name] = self.scope_cycles.get(name, 0.0) + cycles
        if (time_ns := leaf_time_ns(metrics)) is None:
            if "count" in metrics:
                self.skips.skip(f"{name!r}: has launches (count) but no time column")
            return
        if isinstance(time_ns, str):
            self.skips.skip(f"{name!r}: {time_ns}")
            return
        if (count := leaf_count(metrics)) is None:
            self.skips.skip(f"{name!r}: count is {_kind(metrics.get('count'))} (the time is "
                            f"kept, the count is not)")
        if count == 0 and time_ns == 0:
            return              # a frame that recorded nothing, not a launch
        self.kernels.add(name, time_ns, count)


def _name(node: Any) -> Any:
    frame = node.get("frame") if isinstance(node, dict) else None
    return frame.get("name") if isinstance(frame, dict) else None


def _kind(value: Any) -> str:
    return kind(value, "missing or null")
