"""Reading a rocprofv3 kernel trace with pyarrow's CSV parser: `scan_trace`'s numbers, in C++.

Optional: pyarrow comes with the `fast` extra (`pip install 'aorta-profiling[fast]'`) and is
imported when a trace is read, never by `import aorta`. A ROCm 7 row

    "00006409-...","KERNEL_DISPATCH","Agent 4",1,0,714789,1,3,"void k<int, float>(int*)",1,
        1678314002982197,1678314003082277,...          (one line in the file)

is parsed, 16 MiB of whole lines at a time, by `pyarrow.csv.read_csv` into the columns aorta
needs (found by name in the header: the timestamps as text; the name, Kind and the last
column dictionary-encoded), and `pyarrow.compute` sums durations per name. Two chunks are
parsed at once on threads of their own, which also count the chunk's newlines and, when all
its timestamps are plain digits, compute its durations, while the next is read and the
oldest summed, in file order. Only per-kernel totals reach Python: memory is a few chunks
plus the distinct kernels, never the file. (`open_csv` streams too, but parsed on one core
when measured: 3.3-4.5 s on the benchmark's trace, against 2.6-3.3 s here the same hour.)

`rocprof_trace_scan.scan_trace` is the reference: the same totals, launches, longest, skipped
and filtered rows (the reasons may be worded differently), and a cut last row. pyarrow's CSV dialect splits a line into the fields the csv
module finds, so the two agree on every file whose line breaks all end rows or blank lines,
and that is checked: a line break inside quotes, a bare carriage return, a line of 32 KiB or
more, a BOM at a chunk's start, bytes that are not UTF-8, or a row the two split differently
make `scan_trace_arrow` return None, and the caller re-reads the whole file with `scan_trace`.
"""

from __future__ import annotations

import csv
import functools
import importlib
import io
import itertools
import sys
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, BinaryIO

from aorta.parsers.rocprof_trace_scan import (CUT_ROW, END_BEFORE_START, KERNEL_DISPATCH,
                                              TraceColumns, TraceScan, _timestamp)

__all__ = ["arrow_available", "scan_trace_arrow", "CHUNK_BYTES", "LONG_LINE_BYTES"]

CHUNK_BYTES = 16 << 20            # whole lines per pyarrow call; memory is a few times this
PARSE_BLOCK_BYTES = 1 << 20       # pyarrow parses a chunk in blocks of this size; a line
                                  # longer than a block stops it (lines here are < 64 KiB)
PARSERS = 2                       # chunks parsed at once, one thread each (~40 MiB apiece)
GROUP_ROWS = 1 << 15              # rows summed per group-by
COUNT_SLICE_BYTES = 1 << 20       # newlines are counted in copies of this size
LONG_LINE_BYTES = 1 << 15         # a line this long may be refused; one twice as long always is
_INT64_END = 2**63
_BOM = b"\xef\xbb\xbf"
_ROW = "row"                      # the column numbering rows (trace columns are named c0, c1...)
_NS = "ns"                        # the column of durations, when computed while parsing


class _Refused(Exception):
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
    """Read the data rows of an open trace file positioned just after its header, exactly as
    `scan_trace` would (durations in ns). None when only the csv module can read this file
    exactly; `fh` is then left anywhere. Raises ImportError without pyarrow."""
    import pyarrow as pa

    if csv.field_size_limit() < 4 * LONG_LINE_BYTES:      # someone lowered the csv limit
        return None
    scan = TraceScan()
    lines = _WholeLines(fh)
    try:
        _ArrowTrace(columns).read(lines, scan)
    except (_Refused, pa.ArrowException):
        return None
    if lines.tail.strip():        # as scan_trace: a last line without newline is a cut row
        scan.rows += 1
        scan.skips.cut_short(CUT_ROW)
    return scan


class _WholeLines:
    """The trace's data rows in chunks of whole lines with their newline count, each checked
    for what pyarrow and the csv module would treat differently; a last line without newline
    is kept back in `tail`."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh = fh
        self.tail = b""

    def chunks(self, buffers: int) -> Iterator[memoryview]:
        """Chunks of whole lines; a chunk's memory is reused `buffers` chunks later."""
        memory = [bytearray(CHUNK_BYTES + 2 * LONG_LINE_BYTES) for _ in range(buffers)]
        carry = b""               # the start of a line whose end is not read yet
        for turn in itertools.count():
            chunk = memory[turn % buffers]
            chunk[:len(carry)] = carry
            end = len(carry)
            while (cut := chunk.rfind(b"\n", 0, end) + 1) == 0:     # no whole line yet
                if end > 2 * LONG_LINE_BYTES:
                    raise _Refused
                got = _read_into(self.fh, memoryview(chunk)[end:end + CHUNK_BYTES])
                if not got:
                    self.tail = bytes(chunk[:end])
                    return
                end += got
            carry = bytes(chunk[cut:end])
            _check_lines(chunk, cut)
            yield memoryview(chunk)[:cut]


def _read_into(fh: BinaryIO, target: memoryview) -> int:
    """Fill `target` unless the file ends first; the number of bytes read."""
    done = 0
    while done < len(target):
        got = fh.readinto(target[done:])  # type: ignore[attr-defined]
        if not got:
            break
        done += got
    return done


def _newlines(chunk: memoryview) -> int:
    """How many newlines `chunk` holds. `bytearray.count` tests byte by byte; `replace` finds
    them with memchr, on copies small enough for the allocator to reuse: 3x less CPU here."""
    found = 0
    for at in range(0, len(chunk), COUNT_SLICE_BYTES):
        piece = chunk[at:at + COUNT_SLICE_BYTES].tobytes()
        found += len(piece) - len(piece.replace(b"\n", b""))
    return found


def _check_lines(block: bytearray, size: int) -> None:
    """Refuse what the two readers would treat differently, before pyarrow sees it."""
    if block.startswith(_BOM, 0, size):                 # pyarrow drops a BOM at its start
        raise _Refused
    for at in range(0, size, LONG_LINE_BYTES):          # no field near the csv module's limit
        if block.find(b"\n", at, min(at + LONG_LINE_BYTES, size)) < 0:
            raise _Refused
    # Every newline must end one row: a bare \r would end a row too and hide a quoted \n.
    if block.find(b"\r", 0, size) >= 0 and (block.count(b"\r", 0, size)
                                              != block.count(b"\r\n", 0, size)):
        raise _Refused
    if sys.version_info < (3, 11) and block.find(b"\0", 0, size) >= 0:
        raise _Refused                                   # the csv module stops at a NUL
    if not block.isascii():       # pyarrow hands a row of another width over as UTF-8 text
        try:
            str(memoryview(block)[:size], "utf-8")
        except UnicodeDecodeError:
            raise _Refused from None


class _ArrowTrace:
    """Parsing one trace layout with pyarrow, and adding each parsed chunk to the scan."""

    def __init__(self, columns: TraceColumns) -> None:
        self.columns = columns
        self.kind = f"c{columns.kind}" if columns.kind is not None else None
        self.name, self.start, self.end = (f"c{columns.name}", f"c{columns.start}",
                                           f"c{columns.end}")
        self.last = f"c{columns.width - 1}"

    def read(self, lines: _WholeLines, scan: TraceScan) -> None:
        """Parse `lines` with pyarrow into `scan`, or raise _Refused. PARSERS chunks are
        parsed at once, each on a thread of its own, while the next is read and the oldest
        is summed, in file order."""
        parse, sums = self._parser(), _Totals(scan)
        pending: deque[tuple[Future[tuple[Any, int, int]], memoryview]] = deque()
        with ThreadPoolExecutor(max_workers=PARSERS) as parsers:
            for chunk in lines.chunks(buffers=PARSERS + 1):
                pending.append((parsers.submit(parse, chunk), chunk))
                while len(pending) > PARSERS or (pending and pending[0][0].done()):
                    self._add_chunk(*pending.popleft(), scan, sums)
            while pending:
                self._add_chunk(*pending.popleft(), scan, sums)
        sums.finish()

    def _parser(self) -> Callable[[memoryview], tuple[Any, int, int]]:
        """A function parsing one chunk: (table of the columns read, rows of another width,
        newlines), run on a thread of its own: pyarrow lets go of the GIL."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        labels, text = pa.dictionary(pa.int32(), pa.binary()), pa.string()
        types = {self.last: labels, self.name: labels, self.start: text, self.end: text}
        if self.kind:
            types[self.kind] = labels
        read_options = pacsv.ReadOptions(
            column_names=[f"c{i}" for i in range(self.columns.width)],
            block_size=PARSE_BLOCK_BYTES, use_threads=False)
        convert_options = pacsv.ConvertOptions(
            column_types=types, include_columns=list(types), check_utf8=False,
            null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False)

        def parse(chunk: memoryview) -> tuple[Any, int, int]:
            invalid: list[str] = []

            def invalid_row(row: Any) -> str:
                verdict = self._invalid_row(row)
                if verdict == "skip":
                    invalid.append(verdict)
                return verdict
            table = pacsv.read_csv(pa.py_buffer(chunk), read_options=read_options,
                                   parse_options=pacsv.ParseOptions(
                                       invalid_row_handler=invalid_row),
                                   convert_options=convert_options)
            return self._with_durations(table), len(invalid), _newlines(chunk)
        return parse

    def _add_chunk(self, parsing: Future[tuple[Any, int, int]], chunk: memoryview,
                   scan: TraceScan, sums: _Totals) -> None:
        """Add one parsed chunk after checking every newline ended a row or a blank line."""
        table, invalid_rows, newlines = parsing.result()
        rows = table.num_rows + invalid_rows
        if rows != newlines and rows + _blank_lines(chunk) != newlines:
            raise _Refused                    # a line break inside quotes
        self._add(table, scan, sums)
        scan.rows += invalid_rows
        if invalid_rows:
            scan.skips.skip(f"rows whose field count differs from the header's "
                            f"({self.columns.width})", invalid_rows)

    def _invalid_row(self, row: Any) -> str:
        """A row of another width: skipped by both readers when the csv module splits it into
        the same wrong number of fields, and no quote is left open; else pyarrow stops."""
        try:
            parsed = list(csv.reader(io.StringIO(row.text, newline=""), strict=True))
        except csv.Error:
            return "error"
        if len(parsed) != 1 or len(parsed[0]) == self.columns.width:
            return "error"
        return "skip"

    def _with_durations(self, table: Any) -> Any:
        """`table` with a column of durations when every timestamp in it is plain digits
        that fit int64 (the usual case), computed on the parsing thread; else as it was."""
        import pyarrow as pa
        import pyarrow.compute as pc

        start, end = table.column(self.start), table.column(self.end)
        if not pc.all(pc.and_(pc.ascii_is_decimal(start), pc.ascii_is_decimal(end)),
                      min_count=0).as_py():
            return table
        try:
            duration = pc.subtract(pc.cast(end, pa.int64()), pc.cast(start, pa.int64()))
        except pa.ArrowInvalid:
            return table
        return table.append_column(_NS, duration)

    def _add(self, table: Any, scan: TraceScan, sums: _Totals) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        if _any_line_break(table.column(self.last)):
            raise _Refused                    # a quote left open at the end of a parsed block
        scan.rows += table.num_rows
        table = sums.number(table)
        if self.kind:
            dispatch = _equals(table.column(self.kind), KERNEL_DISPATCH)
            if dispatch is not None:
                table = table.filter(dispatch)
                scan.filtered += len(dispatch) - len(table)
        if _NS in table.column_names:
            self._add_durations(table, table.column(_NS), scan, sums)
            return
        start, end = table.column(self.start), table.column(self.end)
        digits = pc.and_(pc.ascii_is_decimal(start), pc.ascii_is_decimal(end))
        if not pc.all(digits, min_count=0).as_py():
            _add_in_python(table.filter(pc.invert(digits)), self, sums)
            table = table.filter(digits)
            start, end = table.column(self.start), table.column(self.end)
        try:
            duration = pc.subtract(pc.cast(end, pa.int64()), pc.cast(start, pa.int64()))
        except pa.ArrowInvalid:               # digits beyond int64: Python's int reads them
            _add_in_python(table, self, sums)
            return
        self._add_durations(table, duration, scan, sums)

    def _add_durations(self, table: Any, duration: Any, scan: TraceScan, sums: _Totals) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        ahead = pc.greater_equal(duration, pa.scalar(0, pa.int64()))
        if not pc.all(ahead, min_count=0).as_py():          # end < start
            scan.skips.skip(END_BEFORE_START,
                            len(duration) - pc.sum(ahead, min_count=0).as_py())
            table, duration = table.filter(ahead), duration.filter(ahead)
        sums.add(table.column(self.name), duration, table.column(_ROW))


class _Totals:
    """Durations gathered over several tables, then summed per name in one group-by (each
    call has a fixed cost; memory: GROUP_ROWS rows at most). Rows are numbered so that
    kernels end up in the order of their first counted row, as `scan_trace` adds them."""

    def __init__(self, scan: TraceScan) -> None:
        self.scan = scan
        self.first: dict[bytes, int] = {}    # name -> number of its first counted row
        self.numbered = 0
        self.pending: list[tuple[Any, Any, Any]] = []
        self.rows = 0

    def number(self, table: Any) -> Any:
        """`table` with a column of row numbers, counted from the trace's first data row."""
        import pyarrow as pa
        import pyarrow.compute as pc

        rows = pc.add(pc.indices_nonzero(pa.repeat(True, table.num_rows)).cast(pa.int64()),
                      pa.scalar(self.numbered, pa.int64()))
        self.numbered += table.num_rows
        return table.append_column(_ROW, rows)

    def add(self, names: Any, durations: Any, rows: Any) -> None:
        self.pending.append((names, durations, rows))
        self.rows += len(durations)
        if self.rows >= GROUP_ROWS:
            self.flush()

    def add_one(self, name: bytes, duration: int, row: int) -> None:
        self.scan.add(name, duration, 1, duration)
        self.first[name] = min(row, self.first.get(name, row))

    def flush(self) -> None:
        import pyarrow as pa

        if self.rows:
            names, durations, rows = (pa.chunked_array(c for part in self.pending
                                                       for c in part[i].chunks)
                                      for i in range(3))
            _add_groups(names, durations, rows, self)
        self.pending, self.rows = [], 0

    def finish(self) -> None:
        """Flush, and put the kernels in the order of their first counted row."""
        self.flush()
        order = sorted(self.scan.kernels, key=self.first.__getitem__)
        self.scan.kernels = {name: self.scan.kernels[name] for name in order}


def _any_line_break(column: Any) -> bool:
    """Whether a value holds a line break (on each chunk's dictionary when encoded)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for chunk in column.chunks:
        values = chunk.dictionary if pa.types.is_dictionary(chunk.type) else chunk
        if pc.any(pc.match_substring_regex(values, "[\r\n]"), min_count=0).as_py():
            return True
    return False


def _equals(column: Any, value: bytes) -> Any:
    """Rows of a dictionary-encoded column equal to `value`, compared on each chunk's
    dictionary; None when every row is."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = pa.scalar(value, pa.binary())         # built once: converting bytes costs more
    same = [pc.equal(chunk.dictionary, wanted) for chunk in column.chunks]
    if all(pc.all(mask, min_count=0).as_py() for mask in same):
        return None
    return pa.chunked_array([pc.take(mask, chunk.indices)
                             for mask, chunk in zip(same, column.chunks)], pa.bool_())


def _blank_lines(chunk: memoryview) -> int:
    """Lines holding nothing but their end: neither reader makes a row of them."""
    lines = chunk.tobytes().split(b"\n")[:-1]
    return lines.count(b"") + lines.count(b"\r")


def _add_groups(names: Any, durations: Any, rows: Any, totals: _Totals) -> None:
    """Per-name sum, count, max and first row; in Python when an int64 sum could overflow."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pc.max(durations).as_py() * len(durations) >= _INT64_END:
        for row in zip(names.to_pylist(), durations.to_pylist(), rows.to_pylist()):
            totals.add_one(*row)
        return
    # Names come dictionary-encoded (hashed by the parsing threads): one dictionary for all
    # chunks, then the group-by runs on the int32 codes.
    names = names.unify_dictionaries()
    labels = names.chunks[0].dictionary if names.num_chunks else pa.array([], pa.binary())
    codes = pa.chunked_array([chunk.indices for chunk in names.chunks], pa.int32())
    groups = (pa.table({"name": codes, "ns": durations, "row": rows})
              .group_by("name", use_threads=False)       # pyarrow's threads parse meanwhile
              .aggregate([("ns", "sum"), ("ns", "count"), ("ns", "max"), ("row", "min")]))
    for name, total, launches, longest, first in zip(
            labels.take(groups.column("name")).to_pylist(),
            *(groups.column(c).to_pylist() for c in ("ns_sum", "ns_count", "ns_max", "row_min"))):
        totals.scan.add(name, total, launches, longest)
        totals.first[name] = min(first, totals.first.get(name, first))


def _add_in_python(table: Any, trace: _ArrowTrace, totals: _Totals) -> None:
    """Rows whose timestamps are not plain digits, read as `_csv_row` reads them: stripped,
    any number of digits, else the row is skipped."""
    import pyarrow as pa

    names = table.column(trace.name).to_pylist()
    starts = table.column(trace.start).cast(pa.binary()).to_pylist()
    ends = table.column(trace.end).cast(pa.binary()).to_pylist()
    for name, start_text, end_text, row in zip(names, starts, ends,
                                               table.column(_ROW).to_pylist()):
        start = _timestamp(start_text.decode("latin-1"))
        end = _timestamp(end_text.decode("latin-1"))
        if start is None or end is None:
            totals.scan.skips.skip("a timestamp that is not a whole number of ns")
        elif end < start:
            totals.scan.skips.skip(END_BEFORE_START)
        elif not name:
            totals.scan.skips.skip("empty Kernel_Name")
        else:
            totals.add_one(name, end - start, row)
