"""Reading a rocprofv3 kernel trace CSV into per-kernel totals with the `csv` module, row by row.
A ROCm 7 row quotes text only:

    "00006409-...","KERNEL_DISPATCH","Agent 4",1,0,714789,1,3,"void k<int, float>(int*)",1,
        1678314002982197,1678314003082277,...          (one line in the file)

Decoded as latin-1 (names come back byte for byte). A last line without a newline is a cut row,
never read ("143" may start 14376257), nor is a row with a NUL byte (`skips.NUL_MARK`). Rows
left out: docs/collectors/reading.md.
"""

from __future__ import annotations

import csv
import functools
import io
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from aorta.parsers.skips import NUL_MARK, NUL_ROW, Skips

BLOCK_BYTES = 1 << 17          # read at a time, then cut after its last newline
MAX_LINE_BYTES = 1 << 24       # a longer "line" is garbage: dropped, so memory stays bounded
KERNEL_DISPATCH = "KERNEL_DISPATCH"
CUT_ROW = "the file ends inside a row (no final newline): cut short, that row is left out"
END_BEFORE_START = "End_Timestamp before Start_Timestamp"


@dataclass(frozen=True)
class TraceColumns:
    """Column indices of one trace file's header (`kind` is None when there is no Kind)."""

    kind: int | None
    name: int
    start: int
    end: int
    width: int
    layout: str


@dataclass
class TraceScan:
    """Per-kernel totals of one trace: raw name -> [total ns, launches, longest ns], in the
    order of each kernel's first counted row."""

    kernels: dict[bytes, list[int]] = field(default_factory=dict)
    rows: int = 0
    used: int = 0
    filtered: int = 0
    skips: Skips = field(default_factory=Skips)


def ends_with_newline(fh: BinaryIO) -> bool:
    """Whether the file's last byte is a newline (an empty file counts as whole). `fh` keeps
    its place."""
    here = fh.tell()
    fh.seek(max(fh.seek(0, io.SEEK_END) - 1, 0))
    last = fh.read(1) or b"\n"
    fh.seek(here)
    return last == b"\n"


_split_lines = functools.partial(io.StringIO, newline="")   # at \n, \r\n and a bare \r


class CsvLines:
    """The data rows' lines for `csv.reader`, split as with newline="", a block of whole lines
    at a time. Lines over MAX_LINE_BYTES are dropped, NULs marked (`nul`), a last line without a
    newline held back as cut; `dropped` counts the lines the csv module never saw."""

    def __init__(self, fh: BinaryIO, skips: Skips) -> None:
        self.fh, self.skips = fh, skips
        self.nul = False
        self.dropped = 0

    def __iter__(self) -> Iterator[str]:
        return itertools.chain.from_iterable(map(_split_lines, self._blocks()))

    def _blocks(self) -> Iterator[str]:
        carry, dropping = b"", False
        while block := self.fh.read(BLOCK_BYTES):
            if dropping:                  # the rest of a line too long to keep
                at = block.find(b"\n")
                if at < 0:
                    continue
                block, dropping = block[at + 1:], False
            data = carry + block if carry else block
            end = data.rfind(b"\n") + 1
            carry = data[end:]
            if end:
                yield self._text(data[:end])
            if len(carry) > MAX_LINE_BYTES:
                carry, dropping = b"", True
                self.dropped += 1
                self.skips.skip(f"a line longer than {MAX_LINE_BYTES} bytes")
        if carry.strip():
            self.dropped += 1
            self.skips.cut_short(CUT_ROW)

    def _text(self, data: bytes) -> str:
        text = data.decode("latin-1")
        if "\0" in text:
            self.nul = True
            text = text.replace("\0", NUL_MARK)
        return text


def scan_trace(fh: BinaryIO, columns: TraceColumns) -> TraceScan:
    """Read the data rows of an open trace file positioned just after its header."""
    scan = TraceScan()
    totals = _read_rows(CsvLines(fh, scan.skips), columns, scan)
    scan.kernels = {name.encode("latin-1"): entry for name, entry in totals.items()}
    return scan


def _read_rows(lines: CsvLines, c: TraceColumns, scan: TraceScan) -> dict[str, list[int]]:
    """Totals by name of the KERNEL_DISPATCH rows; every other row is counted in `scan`.
    After a row the csv module refuses, the same reader goes on at the next line."""
    totals: dict[str, list[int]] = {}
    reader = csv.reader(lines)
    rows = used = filtered = 0
    width, kind, name_at, start_at, end_at = c.width, c.kind, c.name, c.start, c.end
    while True:
        try:
            for row in reader:
                if not row:
                    continue
                rows += 1
                if len(row) != width:
                    scan.skips.skip(f"row {rows + lines.dropped}: {len(row)} fields, the header "
                                    f"has {width}")
                    continue
                if lines.nul and NUL_MARK in "".join(row):
                    scan.skips.skip(f"row {rows + lines.dropped}: {NUL_ROW}")
                    continue
                if kind is not None and row[kind] != KERNEL_DISPATCH:
                    filtered += 1
                    continue
                name, ns = row[name_at], _duration(row[start_at], row[end_at])
                if ns is None or ns < 0 or not name:
                    scan.skips.skip(f"row {rows + lines.dropped}: {_fault(row, c)}")
                    continue
                used += 1
                entry = totals.get(name)
                if entry is None:
                    totals[name] = [ns, 1, ns]
                else:
                    entry[0] += ns
                    entry[1] += 1
                    if ns > entry[2]:
                        entry[2] = ns
        except csv.Error as exc:          # e.g. a field past the csv module's size limit
            rows += 1
            scan.skips.skip(f"row {rows + lines.dropped}: unreadable CSV ({exc})")
            continue
        scan.rows, scan.used, scan.filtered = rows + lines.dropped, used, filtered
        return totals


def _duration(start: str, end: str) -> int | None:
    """End - Start in ns when both are whole numbers, else None."""
    if start.isdecimal() and end.isdecimal():     # in latin-1 text, only 0-9 are decimal
        try:
            return int(end) - int(start)
        except ValueError:                        # more digits than int() reads
            return None
    first, last = _timestamp(start), _timestamp(end)
    return None if first is None or last is None else last - first


def _fault(row: list[str], c: TraceColumns) -> str:
    """Why a KERNEL_DISPATCH row of the right width is left out."""
    start, end = _timestamp(row[c.start]), _timestamp(row[c.end])
    if start is None or end is None:
        bad = row[c.start] if start is None else row[c.end]
        which = "Start_Timestamp" if start is None else "End_Timestamp"
        return f"{which} is {bad[:40]!r}, not a whole number of ns"
    return END_BEFORE_START if end < start else "empty Kernel_Name"


def _timestamp(text: str) -> int | None:
    if not text.isdecimal():      # in latin-1 text, only 0-9 are decimal
        text = text.strip()
        if not (text.isascii() and text.isdigit()):
            return None
    try:
        return int(text)
    except ValueError:            # more digits than int() accepts
        return None
