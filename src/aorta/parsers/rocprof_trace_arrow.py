"""Reading a rocprofv3 kernel trace with pyarrow's CSV reader: a fast path for clean files.

pyarrow (the `fast` extra) is imported only when a trace is read. Chunks of whole lines are
parsed by `pyarrow.csv.read_csv` on this thread: pyarrow's streaming reader reads ahead on
threads of its own, which can outlive the read and hang the interpreter's exit
(apache/arrow#33975). `rocprof_trace_scan` is the reference: at anything the two might read
differently `scan_trace_arrow` returns None and the caller uses it. docs/collectors/rocprof.md.
"""

from __future__ import annotations

import csv
import functools
import importlib
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

from aorta.parsers.rocprof_trace_scan import TraceColumns, TraceScan, ends_with_newline

CHUNK_BYTES = 4 << 20             # whole lines parsed per pyarrow call
BLOCK_BYTES = 1 << 20             # pyarrow parses a chunk in blocks; a longer line stops it
_BOM = b"\xef\xbb\xbf"
_INT64_END = 2**63
#: `auto` reads with pyarrow only here: on Python 3.10 every pyarrow call walks the whole heap
#: (gc.get_referrers, its workaround for bpo-42248), which costs more than its parser saves.
AUTO_PICKS_ARROW = sys.version_info >= (3, 11)


class _Doubtful(Exception):
    """The file holds something pyarrow and the csv module might read differently."""


@functools.cache
def arrow_available() -> bool:
    """True when pyarrow (with its CSV reader and compute functions) imports."""
    try:
        importlib.import_module("pyarrow.compute")
        importlib.import_module("pyarrow.csv")
    except ImportError:
        return False
    return True


def scan_trace_arrow(fh: BinaryIO, columns: TraceColumns) -> TraceScan | None:
    """`scan_trace` (durations in ns) for a trace positioned after its header; None when the csv
    module must read it (`fh` then left anywhere). Raises ImportError without pyarrow, OSError."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    if not ends_with_newline(fh):
        return None
    scan, options = TraceScan(), _options(columns)
    chunks = _CheckedChunks(fh, csv.field_size_limit())
    try:
        for chunk in chunks:
            table = pacsv.read_csv(pa.py_buffer(chunk), **options)
            _add_groups(*_kernel_launches(table, columns, scan), scan)
    except (_Doubtful, pa.ArrowException):
        return None
    if scan.rows != chunks.newlines:      # a blank line, or a line break inside quotes
        return None
    return scan


class _CheckedChunks:
    """The trace's data rows, CHUNK_BYTES of whole lines at a time, refused (_Doubtful) at a
    NUL byte, a bare carriage return, a UTF-8 BOM starting them, a line too long for the csv
    module's field limit, or a last line without newline; `newlines` counts the lines."""

    def __init__(self, fh: BinaryIO, field_limit: int) -> None:
        self.fh = fh
        self.window = max(field_limit // 2, 1)   # no line of 2 * window bytes passes
        self.newlines = 0

    def __iter__(self) -> Iterator[bytes]:
        carry = b""
        while block := self.fh.read(CHUNK_BYTES):
            end = block.rfind(b"\n") + 1
            if end:
                chunk, carry = carry + memoryview(block)[:end], block[end:]
                self._check(chunk)
                yield chunk
            else:
                carry += block
            if len(carry) >= 2 * self.window:
                raise _Doubtful("a long line")
        if carry:
            raise _Doubtful("no newline ends the file")

    def _check(self, chunk: bytes) -> None:
        if not self.newlines and chunk.startswith(_BOM):       # the first chunk
            raise _Doubtful("a BOM starts the data")
        if b"\0" in chunk:
            raise _Doubtful("a NUL byte")
        if b"\r" in chunk and chunk.count(b"\r") != chunk.count(b"\r\n"):
            raise _Doubtful("a bare carriage return")
        # Every stretch of `window` bytes holds a newline, so no line is 2 * window long.
        if any(chunk.find(b"\n", at, at + self.window) < 0
               for at in range(0, len(chunk), self.window)):
            raise _Doubtful("a long line")
        self.newlines += len(chunk) - len(chunk.replace(b"\n", b""))   # memchr: count is slower


def _options(c: TraceColumns) -> dict[str, Any]:
    """The header's width, the columns aorta reads, no null, no thread."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    types = {f"c{c.name}": pa.binary(), f"c{c.start}": pa.string(), f"c{c.end}": pa.string()}
    if c.kind is not None:
        types[f"c{c.kind}"] = pa.binary()
    return {"read_options": pacsv.ReadOptions(column_names=[f"c{i}" for i in range(c.width)],
                                              block_size=BLOCK_BYTES, use_threads=False),
            "parse_options": pacsv.ParseOptions(newlines_in_values=False),
            "convert_options": pacsv.ConvertOptions(
                column_types=types, include_columns=list(types), null_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False)}


def _kernel_launches(table: Any, c: TraceColumns, scan: TraceScan) -> tuple[Any, Any]:
    """Count a chunk's rows; its KERNEL_DISPATCH launches as (names, ns), or raise _Doubtful."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if any(column.null_count for column in table.columns):
        raise _Doubtful("a null")
    rows = table.num_rows
    scan.rows += rows
    if c.kind is not None:
        table = table.filter(pc.equal(table.column(f"c{c.kind}"),
                                      pa.scalar(b"KERNEL_DISPATCH", pa.binary())))
        scan.filtered += rows - table.num_rows
    start, end = table.column(f"c{c.start}"), table.column(f"c{c.end}")
    names = table.column(f"c{c.name}")
    if not pc.all(pc.and_(pc.ascii_is_decimal(start), pc.ascii_is_decimal(end)),
                  min_count=0).as_py():
        raise _Doubtful("a timestamp that is not plain digits")
    ns = pc.subtract(pc.cast(end, pa.int64()), pc.cast(start, pa.int64()))   # past int64:
    if pc.any(pc.less(ns, 0), min_count=0).as_py():                        # ArrowInvalid
        raise _Doubtful("end before start")
    if pc.any(pc.equal(pc.binary_length(names), 0), min_count=0).as_py():
        raise _Doubtful("an empty name")
    return names, ns


def _add_groups(names: Any, ns: Any, scan: TraceScan) -> None:
    """Sum launches per name; a group-by keeps the order of first appearance, so kernels are
    added in the order of their first launch, as `scan_trace` adds them."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(ns):
        return
    if pc.max(ns).as_py() * len(ns) >= _INT64_END:        # a sum could wrap around
        raise _Doubtful("a sum that may pass int64")
    groups = (pa.table({"name": names, "ns": ns}).group_by("name", use_threads=False)
              .aggregate([("ns", "sum"), ("ns", "count"), ("ns", "max")]))
    for name, total, launches, longest in zip(*(groups.column(k).to_pylist() for k in
                                                ("name", "ns_sum", "ns_count", "ns_max"))):
        scan.add(name, total, launches, longest)
