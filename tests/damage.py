"""Damaged copies of real artifacts, made the same way for every format (issue 12.1).

Each case is a copy of a real capture with one kind of damage: the file cut inside a field,
cut exactly at a line break, damaged in the middle, a value of the wrong type at some level of
the document, or a number that is negative, NaN, infinite or text. `check` then holds every
collector to the shared rule (docs/collectors/reading.md): a damaged copy never reads `ok`
unless its damage cannot be seen (a cut at a line break, said so per case), and no published
per-kernel number exceeds what the undamaged copy gives (a row is read whole or not at all).
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["Damaged", "csv_cases", "json_cases", "mutate_json", "check", "truth", "spans"]


@dataclass(frozen=True)
class Damaged:
    case: str
    data: Any                      # bytes, or a JSON value to write
    seen: bool = True              # the damage can be told from the content


BAD_NUMBERS = ["-5", "nan", "inf", "1e999", "abc", ""]


def spans(line: bytes) -> list[tuple[int, int]]:
    """Byte spans of the fields of one CSV line (quotes included), as the csv module splits."""
    out, start, quoted = [], 0, False
    for i, byte in enumerate(line):
        if byte == 0x22:
            quoted = not quoted
        elif byte == 0x2C and not quoted:
            out.append((start, i))
            start = i + 1
    out.append((start, len(line.rstrip(b"\r"))))
    return out


def csv_cases(data: bytes, numeric: list[int], name: int | None, first_row: int = 1,
              rows: list[int] | None = None) -> Iterator[Damaged]:
    """Cuts, middle damage and bad values for a CSV whose data rows start at line
    `first_row`; `numeric` and `name` are field indices of the row damaged."""
    lines = data.split(b"\n")[:-1]
    body = list(range(first_row, len(lines)))
    middle, last = body[len(body) // 2], body[-1]
    offsets = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines) + 1)]
    # cut inside each field of the last row and of a middle row (the file ends there)
    for row in sorted({middle, last}):
        fields = spans(lines[row])
        step = max(1, len(fields) // 10)        # wide exports: ten fields and the ones read
        chosen = set(range(0, len(fields), step)) | set(numeric) | {name, len(fields) - 1}
        for index, (a, b) in enumerate(fields):
            if index in chosen and b - a >= 2:
                at = offsets[row] + (a + b) // 2
                yield Damaged(f"cut inside field {index} of line {row}", data[:at])
    # cut exactly at a line break: nothing in the content says so
    for row in sorted({body[0], middle, body[-2] if len(body) > 1 else body[0]}):
        yield Damaged(f"cut at the line break after line {row}", data[:offsets[row + 1]],
                      seen=False)
    yield Damaged(f"cut at the line break before line {middle}", data[:offsets[middle]],
                  seen=False)
    # damage in the middle of the file
    cut_line = lines[middle][:len(lines[middle]) // 2]
    yield Damaged(f"line {middle} cut short mid-file", _replace_line(lines, middle, cut_line))
    yield Damaged(f"line {middle} replaced by binary garbage",
                  _replace_line(lines, middle, bytes(range(1, 40))))
    for row in rows or [middle]:
        fields = spans(lines[row])
        targets = [(i, BAD_NUMBERS) for i in numeric] + \
            ([(name, ['""'])] if name is not None else [])
        for index, values in targets:
            a, b = fields[index]
            for value in values:
                line = lines[row][:a] + value.encode() + lines[row][b:]
                yield Damaged(f"line {row} field {index} = {value!r}",
                              _replace_line(lines, row, line))


def _replace_line(lines: list[bytes], row: int, new: bytes) -> bytes:
    return b"\n".join(lines[:row] + [new] + lines[row + 1:]) + b"\n"


def json_cases(data: bytes, steps: int = 12) -> Iterator[Damaged]:
    """Cuts of a JSON document: inside a value, at a line break, anywhere mid-file."""
    size = len(data)
    for i in range(1, steps):
        at = size * i // steps
        yield Damaged(f"cut mid-file at byte {at}", data[:at])
    breaks = [i + 1 for i, b in enumerate(data) if b == 0x0A][:-1]
    for at in (breaks[len(breaks) // 3], breaks[-2]) if len(breaks) > 2 else ():
        yield Damaged(f"cut at the line break at byte {at}", data[:at])
    for marker in (b'"dur"', b'"name"', b'"time (ns)"', b'"count"'):
        at = data.rfind(marker)
        if at > 0:
            yield Damaged(f"cut inside {marker.decode()} at byte {at + 3}", data[:at + 3])
            colon = data.find(b":", at) + 3
            yield Damaged(f"cut inside the value of {marker.decode()}", data[:colon])
    yield Damaged("cut one byte short", data.rstrip()[:-1])


WRONG = [None, "12", -1.0, math.nan, math.inf, [1], {"a": 1}, True]


def mutate_json(doc: Any, path: tuple[Any, ...], values: list[Any]) -> Iterator[Damaged]:
    """Copies of `doc` with the value at `path` replaced by each of `values` (a path ending in
    `None` deletes the key before it instead)."""
    for value in values:
        damaged = copy.deepcopy(doc)
        parent = damaged
        for step in path[:-1]:
            parent = parent[step]
        parent[path[-1]] = value
        yield Damaged(f"{'/'.join(map(str, path))} = {value!r}", damaged)


def truth(metrics: dict[str, Any], prefix: str,
          table: str = "kernels") -> dict[str, tuple[int | None, float]]:
    """name -> (calls, total ms) of the undamaged capture."""
    assert metrics[f"{prefix}_capture"] == "ok", metrics.get(f"{prefix}_capture_reason")
    return {r["name"]: (r["calls"], r.get("total_ms", r.get("self_ms")))
            for r in metrics[f"{prefix}_{table}"]}


def check(metrics: dict[str, Any], prefix: str, whole: dict[str, tuple[int | None, float]],
          case: Damaged, table: str = "kernels") -> str:
    """The shared rule, for one damaged copy; returns the state."""
    state = metrics[f"{prefix}_capture"]
    label = f"{case.case}: {state} ({metrics.get(f'{prefix}_capture_reason', '')[:300]})"
    assert state in ("ok", "partial", "unparsed", "empty"), label
    if case.seen:
        assert state in ("partial", "unparsed"), label
    for row in metrics.get(f"{prefix}_{table}", []):
        assert row["name"] in whole, f"{label}: invented kernel {row['name']!r}"
        calls, total = whole[row["name"]]
        got = row.get("total_ms", row.get("self_ms"))
        assert got <= total * (1 + 1e-9) + 1e-12, f"{label}: {row['name']} {got} > {total}"
        if row["calls"] is not None and calls is not None:
            assert row["calls"] <= calls, f"{label}: {row['name']} calls {row['calls']}"
    if state != "ok":
        assert f"{prefix}_capture_reason" in metrics, label
        assert f"{prefix}_kernel_count" not in metrics, label
    if state == "partial":
        assert metrics[f"{prefix}_skipped"] >= 1, label
    if state == "unparsed":
        assert f"{prefix}_gpu_time_ms" not in metrics, label
    return state


def dump(value: Any) -> bytes:
    return value if isinstance(value, bytes) else json.dumps(value).encode()


Summarize = Callable[[bytes], dict[str, Any]]
