"""Streaming a rocprofv3 kernel trace CSV into per-kernel totals, fast and exactly.

rocprofv3 quotes every text field and no number, so a ROCm 7 row reads

    "00006409-...","KERNEL_DISPATCH","Agent 4",1,0,714789,1,3,"void k<int, float>(int*)",1,
        1678314002982197,1678314003082277,...          (one line in the file)

and a kernel name may hold commas but (in practice) never a quote. The fast path splits a whole
block of lines on `"` at once: every row then yields the same number of pieces, the name is the
last quoted piece and the timestamps sit at fixed offsets in the piece after it. Everything runs
in C (bytes.split, map, int); no Python code runs per row. A block that breaks any assumption
(an escaped quote, a changed column width, a short row, a stray newline, a quote inside an
unquoted field, a bare carriage return, a line as long as the csv module's field limit) is
re-read with the `csv` module, which is the reference: both paths give the same numbers and
leave out the same rows. `rocprof_trace_c` does the same in C, where it is built.

A last line without a newline is a row cut by the end of the file (rocprofv3 ends every row
with one): it is left out and counted, never read, since "143" may be the start of 14376257.
"""

from __future__ import annotations

import csv
import io
from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import compress
from operator import itemgetter, methodcaller, sub
from typing import BinaryIO

from aorta.parsers.skips import Skips

__all__ = ["TraceColumns", "TraceScan", "RowShape", "row_shape", "scan_trace", "BLOCK_BYTES"]

BLOCK_BYTES = 1 << 17          # small enough to stay in cache, large enough to amortise calls
MAX_LINE_BYTES = 1 << 24       # a longer "line" is garbage: dropped, so memory stays bounded
KERNEL_DISPATCH = b"KERNEL_DISPATCH"
CUT_ROW = "the file ends inside a row (no final newline): cut short, that row is left out"
END_BEFORE_START = "End_Timestamp before Start_Timestamp"
_LAST_BYTE = itemgetter(-1)
_FIRST_BYTE = itemgetter(0)
_COMMAS = methodcaller("count", b",")


@dataclass(frozen=True)
class TraceColumns:
    """Column indices of one trace file's header (`kind` is None when there is no Kind)."""

    kind: int | None
    name: int
    start: int
    end: int
    width: int
    layout: str


@dataclass(frozen=True)
class RowShape:
    """Where the fields sit in the raw bytes of a row whose quotes only wrap whole fields."""

    quotes: int              # quote characters per row
    kind_piece: int | None   # index of the Kind text among the row's `"`-split pieces
    start_field: int         # Start_Timestamp's field index in the piece after the name
    end_field: int
    tail_commas: int         # commas in that piece
    width: int               # fields per row


@dataclass
class TraceScan:
    """Per-kernel totals of one trace: raw name -> [total ns, launches, longest ns]."""

    kernels: dict[bytes, list[int]] = field(default_factory=dict)
    rows: int = 0
    used: int = 0
    filtered: int = 0
    skips: Skips = field(default_factory=Skips)

    @property
    def skipped(self) -> int:
        return self.skips.count

    def add(self, name: bytes, total: int, launches: int, longest: int) -> None:
        """Add `launches` rows of one kernel; rows without a name are skipped."""
        if not name:
            self.skips.skip("empty Kernel_Name", launches)
            return
        entry = self.kernels.get(name)
        if entry is None:
            self.kernels[name] = [total, launches, longest]
        else:
            entry[0] += total
            entry[1] += launches
            entry[2] = max(entry[2], longest)
        self.used += launches

    def merge(self, groups: dict[bytes, list[int]]) -> None:
        """Add lists of single durations, by name."""
        for name, durations in groups.items():
            self.add(name, sum(durations), len(durations), max(durations))


def scan_trace(fh: BinaryIO, columns: TraceColumns) -> TraceScan:
    """Read the data rows of an open trace file positioned just after its header."""
    scan = TraceScan()
    shape: RowShape | None = None
    for chunk in _line_blocks(fh, scan):
        if shape is None:                 # learnt from the first row that fits, block by block
            shape = row_shape(chunk[:chunk.find(b"\n")].rstrip(b"\r"), columns)
        if (shape is None or not _lines_within(chunk, csv.field_size_limit())
                or not _fast_block(chunk, shape, scan)):
            _csv_block(chunk, columns, scan)
    return scan


def _line_blocks(fh: BinaryIO, scan: TraceScan) -> Iterator[bytes]:
    """Blocks of whole lines. A last line without newline is counted as cut, not yielded."""
    pending = b""
    while block := fh.read(BLOCK_BYTES):
        data = pending + block if pending else block
        cut = data.rfind(b"\n")
        if cut < 0:
            pending = data
            if len(pending) > MAX_LINE_BYTES:
                scan.skips.skip(f"a line longer than {MAX_LINE_BYTES} bytes")
                pending = b""
            continue
        pending = data[cut + 1:]
        yield data[:cut + 1]
    if pending.strip():
        scan.rows += 1
        scan.skips.cut_short(CUT_ROW)


def row_shape(line: bytes, columns: TraceColumns) -> RowShape | None:
    """The shape of `line` (one data row, no newline) if the fast path can read rows like it:
    first field quoted, no escaped quotes, the name the last quoted field, the Kind quoted, and
    the timestamps unquoted after the name. None otherwise (the file is read with `csv`)."""
    pieces = line.split(b'"')
    quotes = len(pieces) - 1
    if quotes == 0 or quotes % 2 or pieces[0]:
        return None
    try:
        fields = next(csv.reader([line.decode("latin-1")]))
    except (csv.Error, StopIteration):
        return None
    if len(fields) != columns.width:
        return None
    column, quoted = 0, {}
    for j in range(0, quotes, 2):
        column += pieces[j].count(b",")
        if column >= len(fields) or fields[column].encode("latin-1") != pieces[j + 1]:
            return None
        quoted[column] = j + 1
    kind_piece = quoted.get(columns.kind) if columns.kind is not None else None
    last = columns.width - 1
    if quoted.get(columns.name) != quotes - 1 or (columns.kind is not None and kind_piece is None):
        return None
    if not (columns.name < columns.start < last and columns.name < columns.end < last):
        return None
    return RowShape(quotes, kind_piece, columns.start - columns.name, columns.end - columns.name,
                    pieces[quotes].count(b","), columns.width)


def _lines_within(chunk: bytes, limit: int) -> bool:
    """Whether every line of `chunk` is shorter than `limit`, so that no field can pass the csv
    module's field limit (a row with one it refuses, and so must the fast path): true when
    every stretch of limit // 2 bytes holds a newline. A few `find` calls a block."""
    step = max(limit // 2, 1)
    return all(chunk.find(b"\n", at, at + step) >= 0 for at in range(0, len(chunk), step))


def _fast_block(chunk: bytes, shape: RowShape, scan: TraceScan) -> bool:
    """Add a block of whole lines; False (nothing added) when a row breaks the shape."""
    q = shape.quotes
    pieces = chunk.split(b'"')
    tails = pieces[q::q]
    n = len(tails)
    # Every line has exactly q quotes iff the n newlines all end the n tail pieces.
    if (n == 0 or len(pieces) - 1 != q * n or chunk.count(b"\n") != n
            or not all(tails) or bytes(map(_LAST_BYTE, tails)) != b"\n" * n
            or list(map(_COMMAS, tails)) != [shape.tail_commas] * n
            or not _whole_fields(chunk, pieces, n, shape)):
        return False
    names = pieces[q - 1::q]
    filtered = 0
    if shape.kind_piece is not None:
        kinds = pieces[shape.kind_piece::q]
        if kinds.count(KERNEL_DISPATCH) != n:
            keep = list(map(KERNEL_DISPATCH.__eq__, kinds))
            names, tails = list(compress(names, keep)), list(compress(tails, keep))
            filtered = n - len(names)
    durations = _durations(tails, shape) if tails else []
    if durations is None:
        return False
    scan.rows += n
    scan.filtered += filtered
    if durations and min(durations) < 0:
        keep = list(map((0).__le__, durations))
        names, durations = list(compress(names, keep)), list(compress(durations, keep))
        scan.skips.skip(END_BEFORE_START, len(keep) - len(durations))
    groups: defaultdict[bytes, list[int]] = defaultdict(list)
    deque(map(list.append, map(groups.__getitem__, names), durations), maxlen=0)
    scan.merge(groups)
    return True


def _whole_fields(chunk: bytes, pieces: list[bytes], n: int, shape: RowShape) -> bool:
    """Whether the csv module splits each of the n rows into the fields the fast path takes:
    every quote opens a field (at a row's start or after a comma) or closes one (before a
    comma), the unquoted text between quoted fields holds the first row's commas in every
    row (width - 1 in all, with the tail's), and no bare carriage return ends a row early.
    Commas are counted per row, not per block, so a row one field long and another one
    short do not cancel out. Each unquoted piece's first and last byte are gathered with
    `map`, in C."""
    unquoted = pieces[2::2]
    half = shape.quotes // 2
    try:
        if not (chunk.startswith(b'"')
                and bytes(map(_FIRST_BYTE, unquoted)) == b"," * len(unquoted)
                and bytes(map(_LAST_BYTE, unquoted)) == (b"," * (half - 1) + b"\n") * n):
            return False
    except IndexError:              # an empty piece: two quotes side by side
        return False
    inner = 0                       # commas between quoted fields; the tails are checked apart
    for j in range(2, shape.quotes, 2):
        column = list(map(_COMMAS, pieces[j::shape.quotes]))
        if column != [column[0]] * n:
            return False
        inner += column[0]
    if inner != shape.width - 1 - shape.tail_commas:
        return False
    return b"\r" not in chunk or chunk.count(b"\r") == chunk.count(b"\r\n")


def _durations(tails: list[bytes], shape: RowShape) -> list[int] | None:
    """End - Start of every row, or None unless both sit at the first row's byte offsets in
    every tail (true for runs of rows whose Correlation_Id has the same number of digits)."""
    first = tails[0]
    commas, at = [], -1
    for _ in range(max(shape.start_field, shape.end_field) + 1):
        at = first.find(b",", at + 1)
        if at < 0:
            return None
        commas.append(at)
    bounds = (commas[shape.start_field - 1], commas[shape.start_field],
              commas[shape.end_field - 1], commas[shape.end_field])
    every_comma = b"," * len(tails)
    try:
        if any(bytes(map(itemgetter(p), tails)) != every_comma for p in set(bounds)):
            return None
        starts = list(map(itemgetter(slice(bounds[0] + 1, bounds[1])), tails))
        ends = list(map(itemgetter(slice(bounds[2] + 1, bounds[3])), tails))
        if not (b"".join(starts).isdigit() and b"".join(ends).isdigit()):
            return None
        return list(map(sub, map(int, ends), map(int, starts)))
    except (IndexError, ValueError):   # a short tail; a number past int's digit limit
        return None


def _csv_block(chunk: bytes, columns: TraceColumns, scan: TraceScan) -> None:
    """The reference reading of a block: the csv module, row by row."""
    groups: defaultdict[bytes, list[int]] = defaultdict(list)
    reader = csv.reader(io.StringIO(chunk.decode("latin-1"), newline=""))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error as exc:       # e.g. a field past the csv module's size limit
            scan.rows += 1
            scan.skips.skip(f"row {scan.rows}: unreadable CSV ({exc})")
            continue
        if row:
            scan.rows += 1
            _csv_row(row, columns, scan, groups)
    scan.merge(groups)


def _csv_row(row: list[str], columns: TraceColumns, scan: TraceScan,
             groups: defaultdict[bytes, list[int]]) -> None:
    if len(row) != columns.width:
        scan.skips.skip(f"row {scan.rows}: {len(row)} fields, the header has {columns.width}")
        return
    if columns.kind is not None and row[columns.kind] != "KERNEL_DISPATCH":
        scan.filtered += 1
        return
    start, end = _timestamp(row[columns.start]), _timestamp(row[columns.end])
    if start is None or end is None:
        bad = row[columns.start] if start is None else row[columns.end]
        which = "Start_Timestamp" if start is None else "End_Timestamp"
        scan.skips.skip(f"row {scan.rows}: {which} is {bad[:40]!r}, not a whole number of ns")
    elif end < start:
        scan.skips.skip(f"row {scan.rows}: {END_BEFORE_START}")
    elif not row[columns.name]:
        scan.skips.skip(f"row {scan.rows}: empty Kernel_Name")
    else:
        groups[row[columns.name].encode("latin-1")].append(end - start)


def _timestamp(text: str) -> int | None:
    text = text.strip()
    if not (text.isascii() and text.isdigit()):
        return None
    try:
        return int(text)
    except ValueError:          # more digits than int() accepts
        return None
