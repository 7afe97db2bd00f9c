"""The csv module's trace reader (`rocprof_trace_scan`) against the obvious reading of the whole
file (`rocprof_traces.obvious_reading`): generated hostile traces, random bytes spliced
anywhere, every way a file can end, fields past the csv module's limit, lines past the
reader's, NUL bytes on every Python, sums past int64, many names, bounded memory."""

from __future__ import annotations

import csv
import random
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from rocprof_traces import H6, H7, generated_trace, obvious_reading, quoted

import aorta.parsers.rocprof_trace_scan as scanner
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.rocprof_csv import read_trace, trace_columns

SHORT = ["Kind", "Kernel_Name", "Start_Timestamp", "End_Timestamp"]
NAMES = ["k_short", "void g<float, 128>(float const*, float*, int)", 'q<"fast">(int)',
         "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN", "", 'a""b, c',
         "multi\nline", "cr\rin name", "crlf\r\nin name", "comma, \"quote\", comma"]
ODD_TIMESTAMPS = ["", "nan", " 12 ", "-5", "-0", "0x10", "+5", "9" * 18, "9" * 19, "9" * 400,
                  "1e3", "\t7", "00012", "\xa012\x85", "\x1c3", "١٢", "1_000", "9" * 5000]
SPLICES = ["\n", "\r\n", "\r", '"', '"\n', ",", "\x00", "\ufeff", "junk", '""', "\xff",
           '"' + "z" * 200]


def hostile_trace(rows: int, seed: int, header: list[str], eol: str = "\n") -> str:
    """A third of the rows with hazards of seven kinds, and stray lines of every sort."""
    return generated_trace(rows, seed, header, eol, names=NAMES, odd_timestamps=ODD_TIMESTAMPS,
                           hazard_rate=0.33, picks=9, kinds=7, strays=["", "\r", " ", '"'])


def write(tmp_path: Path, data: bytes | str) -> Path:
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


def short_trace(rows: list[str]) -> str:
    return ",".join(map(quoted, SHORT)) + "\n" + "\n".join(rows) + "\n"


def scanned(path: Path) -> tuple[dict[str, Any], list[tuple[bytes, int, int, int]]]:
    """What `scan_trace` reads, in `obvious_reading`'s shape."""
    with open(path, "rb") as fh:
        scan = scanner.scan_trace(fh, trace_columns(fh.readline()))
    counts = {"rows": scan.rows, "used": scan.used, "filtered": scan.filtered,
              "skipped": scan.skips.count, "cut": bool(scan.skips.cut)}
    return counts, [(name, *entry) for name, entry in scan.kernels.items()]  # type: ignore


def agree(path: Path) -> tuple[dict[str, Any], list[tuple[bytes, int, int, int]]]:
    """Assert the reader reads `path` as the obvious reading does; its reading."""
    got = scanned(path)
    assert got == obvious_reading(path.read_bytes())
    return got


def reasons(path: Path) -> list[str]:
    report = read_trace(path, KernelTable())
    return report.skips.examples


# --- generated and damaged traces ------------------------------------------------------------

@pytest.mark.parametrize("header", [H6, H7, SHORT], ids=["rocm6", "rocm7", "short"])
@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("block", [scanner.BLOCK_BYTES, 4096, 300])
def test_hostile_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, header: list[str],
                        eol: str, block: int) -> None:
    """Small blocks end inside quoted line breaks: the csv module reads on across them."""
    monkeypatch.setattr(scanner, "BLOCK_BYTES", block)
    for seed in range(2):
        counts, _ = agree(write(tmp_path, hostile_trace(1500, seed, header, eol)))
        if eol == "\n":
            assert counts["skipped"] > 100 and counts["used"] > 500


@pytest.mark.parametrize("seed", range(60))
def test_garbage_reads_as_the_csv_module_reads_it(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  seed: int) -> None:
    """Random bytes spliced anywhere after the header, random block sizes and field limits."""
    rnd = random.Random(seed)
    monkeypatch.setattr(scanner, "BLOCK_BYTES", rnd.choice([64, 500, 4096, 1 << 17]))
    text = list(hostile_trace(300, seed, rnd.choice([H6, H7, SHORT])))
    data_start = text.index("\n") + 1
    for _ in range(rnd.randrange(1, 12)):
        text.insert(rnd.randrange(data_start, len(text)), rnd.choice(SPLICES))
    path = write(tmp_path, "".join(text).encode("utf-8" if seed % 2 else "latin-1", "replace"))
    limit = csv.field_size_limit(rnd.choice([50, 300, 131072]))
    try:
        agree(path)
    finally:
        csv.field_size_limit(limit)


@pytest.mark.parametrize("ending", [b"", b"\n", b"\n\n\n", b"\n\r\n", b"\n  \t", b'\n"KERNEL_DI',
                                    b'\n"KERNEL_DISPATCH","k",1,2', b'\n"open\n', b"\r"])
def test_the_last_line(tmp_path: Path, ending: bytes) -> None:
    counts, _ = agree(write(tmp_path, hostile_trace(50, 3, SHORT).encode().rstrip(b"\n")
                            + ending))
    assert counts["cut"] == (ending in (b"", b"\r", b'\n"KERNEL_DI',    # the last row cut
                                        b'\n"KERNEL_DISPATCH","k",1,2'))


def test_empty_and_header_only_files(tmp_path: Path) -> None:
    header = ",".join(quoted(c) for c in SHORT)
    for text, note in [("", "empty file"), ("\n", "empty file"), (header, ""),
                       (header + "\n", ""), (header + "\n\n\r\n", "")]:
        report = read_trace(write(tmp_path, text), KernelTable())
        assert (report.rows, report.skips.count, report.note) == (0, 0, note)


# --- limits ------------------------------------------------------------------------------------

def test_fields_past_the_csv_limit(tmp_path: Path) -> None:
    """A field one character past the limit makes the row unreadable, quoted or not, and the
    rest of its line is dropped; one exactly at the limit is read."""
    limit = csv.field_size_limit()
    rows = [f'"KERNEL_DISPATCH","{"n" * limit}",1,2',            # at the limit: read
            f'"KERNEL_DISPATCH","{"n" * (limit + 1)}",1,2',      # past it, quoted
            f'"KERNEL_DISPATCH",k,1,{"5" * (limit + 1)}',        # past it, unquoted
            f'"KERNEL_DISPATCH","a""{"b" * limit}",1,2',         # past it through a ""
            f'"KERNEL_DISPATCH","{"m" * (limit - 2)}\n\nzz",1,2',  # past it on a later line
            '"KERNEL_DISPATCH","after",1,3']
    path = write(tmp_path, short_trace(rows))
    counts, _ = agree(path)
    assert counts["skipped"] == 4 and counts["used"] == 2
    assert "unreadable CSV (field larger than field limit" in reasons(path)[0]


def test_a_line_longer_than_the_reader_keeps(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Dropped whole, unread, and counted as one row left out."""
    monkeypatch.setattr(scanner, "MAX_LINE_BYTES", 5000)
    monkeypatch.setattr(scanner, "BLOCK_BYTES", 1024)
    rows = ['"KERNEL_DISPATCH","k",1,2', '"KERNEL_DISPATCH","' + "x" * 9000 + '",1,2',
            '"KERNEL_DISPATCH","k",1,4'] * 3
    path = write(tmp_path, short_trace(rows))
    counts, kernels = scanned(path)
    assert counts == {"rows": 9, "used": 6, "filtered": 0, "skipped": 3, "cut": False}
    assert kernels == [(b"k", 12, 6, 3)]
    assert reasons(path) == ["a line longer than 5000 bytes"]


def test_reasons_and_kernels_keep_the_files_order(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels in the order of their first launch; reasons, row numbers (a dropped line
    counts as a row) and a number past int64 as they come."""
    monkeypatch.setattr(scanner, "MAX_LINE_BYTES", 20000)
    rows = [f'"KERNEL_DISPATCH","k{i % 5}",{i},{i + 7}' for i in range(120000)]
    rows[3] = '"KERNEL_DISPATCH","k1",9,8'                      # end < start
    rows[60000] = '"KERNEL_DISPATCH","' + "y" * 300000 + '",1,2'   # dropped: too long
    rows[100000] = f'"KERNEL_DISPATCH","late",1,{"9" * 30}'    # past int64: read exactly
    rows[100001] = '"KERNEL_DISPATCH","k2",x,8'
    path = write(tmp_path, short_trace(rows))
    counts, kernels = scanned(path)
    assert [k[0] for k in kernels] == [b"k0", b"k1", b"k2", b"k4", b"k3", b"late"]
    assert kernels[-1] == (b"late", 10**30 - 2, 1, 10**30 - 2)
    assert counts == {"rows": 120000, "used": 119997, "filtered": 0, "skipped": 3,
                      "cut": False}
    assert reasons(path) == ["row 4: End_Timestamp before Start_Timestamp",
                             "a line longer than 20000 bytes",
                             "row 100002: Start_Timestamp is 'x', not a whole number of ns"]


def test_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    rows = [f'"KERNEL_DISPATCH","kernel_{i % 50}",{i},{2 * i}' for i in range(150000)]
    path = write(tmp_path, short_trace(rows))
    tracemalloc.start()
    try:
        counts, _ = scanned(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert counts["used"] == 150000
    assert path.stat().st_size > 6 << 20 and peak < 2 << 20


class Trickle:
    """A file of `data` whose reads return a few bytes at a time, or raise after `fail` reads."""

    def __init__(self, data: bytes, fail: int = -1) -> None:
        self.data, self.at, self.calls, self.fail = data, 0, 0, fail

    def read(self, size: int = -1) -> bytes:
        self.calls += 1
        if self.calls == self.fail:
            raise OSError("disk gone")
        got = self.data[self.at:self.at + min(size, 1 + self.calls % 977)]
        self.at += len(got)
        return got


def test_short_reads_give_the_same_scan(tmp_path: Path) -> None:
    path = write(tmp_path, hostile_trace(1500, 5, SHORT))
    header, _, body = path.read_bytes().partition(b"\n")
    scan = scanner.scan_trace(Trickle(body), trace_columns(header))     # type: ignore[arg-type]
    counts, kernels = scanned(path)
    assert (scan.rows, scan.used, scan.skips.count) == (counts["rows"], counts["used"],
                                                        counts["skipped"])
    assert [(name, *entry) for name, entry in scan.kernels.items()] == kernels


def test_a_read_error_mid_file_comes_out(tmp_path: Path) -> None:
    data = short_trace([f'"KERNEL_DISPATCH","k",{i},{i + 1}' for i in range(5000)]).encode()
    header, _, body = data.partition(b"\n")
    with pytest.raises(OSError, match="disk gone"):
        scanner.scan_trace(Trickle(body, fail=40), trace_columns(header))  # type: ignore[arg-type]


# --- values ------------------------------------------------------------------------------------

def test_sums_beyond_int64(tmp_path: Path) -> None:
    rows = [f'"KERNEL_DISPATCH","huge",1,{2**62}' for _ in range(12)]
    rows += [f'"KERNEL_DISPATCH","huger",1,{"9" * 25}', '"KERNEL_DISPATCH","huger",5,9',
             f'"KERNEL_DISPATCH","huge",{"0" * 30}5,{"0" * 30}7']
    _, kernels = agree(write(tmp_path, short_trace(rows)))
    assert kernels[0] == (b"huge", 12 * (2**62 - 1) + 2, 13, 2**62 - 1)
    assert kernels[1] == (b"huger", 10**25 - 2 + 4, 2, 10**25 - 2)


def test_many_distinct_names(tmp_path: Path) -> None:
    rows = [f'"KERNEL_DISPATCH","kernel_{i % 20000}_{"x" * (i % 20000 % 7)}",{i},{2 * i}'
            for i in range(60000)]
    counts, kernels = agree(write(tmp_path, short_trace(rows)))
    assert len(kernels) == 20000 and counts["used"] == 60000


def test_no_kind_column_and_columns_in_any_order(tmp_path: Path) -> None:
    header = '"End_Timestamp","x","Kernel_Name","Start_Timestamp"\n'
    rows = "".join(f'{10 + i},{i},"k{i % 3}",{i}\n' for i in range(100))
    counts, _ = agree(write(tmp_path, header + rows + '5,1,"k0",9\n'))
    assert counts["used"] == 100 and counts["skipped"] == 1


def test_an_empty_timestamp_in_the_first_row(tmp_path: Path) -> None:
    path = write(tmp_path, short_trace(['"KERNEL_DISPATCH","k",,5']))
    agree(path)
    assert reasons(path) == ["row 1: Start_Timestamp is '', not a whole number of ns"]


# --- NUL bytes: one rule on every Python -------------------------------------------------------

NUL_ROWS = ['"KERNEL_DISPATCH","k",1,5', '"KERNEL_DISPATCH","k\0",1,5',
            '"KERNEL_DISPATCH","k",1\0,5', '"KERNEL_DISPATCH\0","k",1,5',
            '"KERNEL_DISPATCH","multi\nline\0",1,5', '\0', '"KERNEL_DISPATCH","k",2,5']


def test_a_row_holding_a_nul_is_left_out(tmp_path: Path) -> None:
    path = write(tmp_path, short_trace(NUL_ROWS))
    counts, kernels = agree(path)
    assert counts == {"rows": 7, "used": 2, "filtered": 0, "skipped": 5, "cut": False}
    assert kernels == [(b"k", 7, 2, 4)]
    assert reasons(path) == ["row 2: a NUL byte (a malformed row)",
                             "row 3: a NUL byte (a malformed row)",
                             "row 4: a NUL byte (a malformed row)"]


def test_the_csv_module_never_sees_a_nul(tmp_path: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Python 3.10's csv module refuses a line holding a NUL, 3.11's reads it: fed one as
    3.10 would be, the reader reads the same."""
    path = write(tmp_path, short_trace(NUL_ROWS * 3))
    expected = scanned(path)
    plain = csv.reader

    def like_python_310(lines: Any, *args: Any, **kwargs: Any) -> Any:
        def refuse(lines: Any) -> Any:
            for line in lines:
                if "\0" in line:
                    raise csv.Error("line contains NUL")
                yield line
        return plain(refuse(lines), *args, **kwargs)

    monkeypatch.setattr(csv, "reader", like_python_310)
    assert scanned(path) == expected


def test_a_header_holding_a_nul_refuses_the_file(tmp_path: Path) -> None:
    path = write(tmp_path, '"Kind","Kernel_Name\0","Start_Timestamp","End_Timestamp"\n'
                           '"KERNEL_DISPATCH","k",1,5\n')
    report = read_trace(path, KernelTable())
    assert report.note == "unreadable header (a NUL byte)" and report.rows == 0
