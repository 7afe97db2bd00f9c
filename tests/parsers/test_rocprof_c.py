"""The compiled trace scanner against the pure-Python one: the same report, the same kernels in
the same order, and the same reasons, on every fixture and on generated hostile traces. Skipped
where the extension is not built (aorta installed without a C compiler)."""

from __future__ import annotations

import csv
import dataclasses
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import aorta.parsers.rocprof_trace_scan as scanner
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.rocprof_csv import read_trace, trace_columns
from aorta.parsers.rocprof_trace_c import c_available, scan_trace_c
from rocprof_traces import H6, H7, generated_trace, quoted

pytestmark = pytest.mark.skipif(not c_available(), reason="aorta.parsers._rocprof_scan is not "
                                "built (install aorta with a C compiler at hand)")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rocprof"
SRC = Path(__file__).resolve().parents[2] / "src"
TRACES = sorted(p for p in FIXTURES.rglob("*.csv") if "trace" in p.name)
SHORT = ["Kind", "Kernel_Name", "Start_Timestamp", "End_Timestamp"]


def result(path: Path, reader: str, reasons: bool = True) -> tuple[Any, ...]:
    """The whole report (reasons included unless `reasons` is False) and every kernel, in
    table order."""
    table = KernelTable()
    report = read_trace(path, table, reader=reader)
    fields = dataclasses.asdict(report)
    if not reasons:
        fields["skips"] = (report.skips.count, report.skips.cut)
    return fields, [(r.name, r.total_ns, r.calls, r.max_ns) for r in table.rows.values()]


def csv_reference(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """What `scan_trace` gives when every block goes through the csv module: the wording the
    compiled scanner keeps."""
    with monkeypatch.context() as patch:
        patch.setattr(scanner, "row_shape", lambda *args: None)
        return result(path, "python")


def agree(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """Assert the compiled scanner reads `path` as the csv module does, reasons included, and
    as the Python scanner's fast path does, reasons aside; its result."""
    got = result(path, "c")
    assert got == csv_reference(path, monkeypatch)
    assert result(path, "c", reasons=False) == result(path, "python", reasons=False)
    return got


def write(tmp_path: Path, data: bytes | str) -> Path:
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --- every fixture ---------------------------------------------------------------------------

@pytest.mark.parametrize("path", TRACES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_c_equals_python_on_every_fixture(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    agree(path, monkeypatch)


def test_auto_picks_the_compiled_scanner(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def counted(*args: Any) -> Any:
        calls.append(1)
        return scan_trace_c(*args)
    monkeypatch.setattr("aorta.parsers.rocprof_csv.scan_trace_c", counted)
    table = KernelTable()
    report = read_trace(FIXTURES / "rocm7" / "aorta_4242_kernel_trace.csv", table)
    assert calls == [1] and (report.rows, report.used, table.total_ns()) == (7, 7, 575000)


# --- generated traces ------------------------------------------------------------------------

NAMES = ["k_short", "void g<float, 128>(float const*, float*, int)", 'q<"fast">(int)',
         "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN", "", 'a""b, c',
         "multi\nline", "cr\rin name", "crlf\r\nin name", "comma, \"quote\", comma"]
ODD_TIMESTAMPS = ["", "nan", " 12 ", "-5", "-0", "0x10", "+5", "9" * 18, "9" * 19, "9" * 400,
                  "1e3", "\t7", "00012", "\xa012\x85", "\x1c3", "١٢", "1_000", "9" * 5000]


def hostile_trace(rows: int, seed: int, header: list[str], eol: str = "\n") -> str:
    """A third of the rows with hazards of seven kinds, and stray lines of every sort."""
    return generated_trace(rows, seed, header, eol, names=NAMES, odd_timestamps=ODD_TIMESTAMPS,
                           hazard_rate=0.33, picks=9, kinds=7, strays=["", "\r", " ", '"'])


@pytest.mark.parametrize("header", [H6, H7, SHORT], ids=["rocm6", "rocm7", "short"])
@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"], ids=["lf", "crlf", "cr"])
@pytest.mark.parametrize("block", [scanner.BLOCK_BYTES, 4096, 300])
def test_c_equals_python_on_hostile_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           header: list[str], eol: str, block: int) -> None:
    """Small blocks put a block's end inside quoted line breaks, where the Python scanner
    hands the csv module part of a row: the compiled one must cut rows the same way."""
    monkeypatch.setattr(scanner, "BLOCK_BYTES", block)
    for seed in range(2):
        got = agree(write(tmp_path, hostile_trace(1500, seed, header, eol)), monkeypatch)
        if eol == "\n":
            assert got[0]["skips"]["count"] > 100 and got[0]["used"] > 500


SPLICES = ["\n", "\r\n", "\r", '"', '"\n', ",", "\x00", "\ufeff", "junk", '""', "\xff",
           '"' + "z" * 200]


@pytest.mark.parametrize("seed", range(60))
def test_garbage_reads_as_the_csv_module_reads_it(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  seed: int) -> None:
    """Random bytes spliced anywhere, random block sizes and field limits."""
    rnd = random.Random(seed)
    monkeypatch.setattr(scanner, "BLOCK_BYTES", rnd.choice([64, 500, 4096, 1 << 17]))
    monkeypatch.setattr(scanner, "MAX_LINE_BYTES", rnd.choice([100, 1000, 1 << 24]))
    text = list(hostile_trace(300, seed, rnd.choice([H6, H7, SHORT])))
    for _ in range(rnd.randrange(1, 12)):
        text.insert(rnd.randrange(len(text)), rnd.choice(SPLICES))
    path = write(tmp_path, "".join(text).encode("utf-8" if seed % 2 else "latin-1", "replace"))
    limit = csv.field_size_limit(rnd.choice([50, 300, 131072]))
    try:
        agree(path, monkeypatch)
    finally:
        csv.field_size_limit(limit)


@pytest.mark.parametrize("ending", [b"", b"\n", b"\n\n\n", b"\n\r\n", b"\n  \t", b'\n"KERNEL_DI',
                                    b'\n"KERNEL_DISPATCH","k",1,2', b'\n"open\n', b"\r"])
def test_the_last_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, ending: bytes) -> None:
    agree(write(tmp_path, hostile_trace(50, 3, SHORT).encode().rstrip(b"\n") + ending),
          monkeypatch)


def test_empty_and_header_only_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    header = ",".join(quoted(c) for c in SHORT)
    for text in ["", "\n", header, header + "\n", header + "\n\n\r\n"]:
        agree(write(tmp_path, text), monkeypatch)


def test_fields_past_the_csv_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A field one character past the limit makes the row unreadable, quoted or not, and the
    rest of its line is dropped; one exactly at the limit is read."""
    limit = csv.field_size_limit()
    rows = [f'"KERNEL_DISPATCH","{"n" * limit}",1,2',            # at the limit: read
            f'"KERNEL_DISPATCH","{"n" * (limit + 1)}",1,2',      # past it, quoted
            f'"KERNEL_DISPATCH",k,1,{"5" * (limit + 1)}',        # past it, unquoted
            f'"KERNEL_DISPATCH","a""{"b" * limit}",1,2',         # past it through a ""
            f'"KERNEL_DISPATCH","{"m" * (limit - 2)}\n\nzz",1,2',  # past it on a later line
            '"KERNEL_DISPATCH","after",1,3']
    path = write(tmp_path, ",".join(map(quoted, SHORT)) + "\n" + "\n".join(rows) + "\n")
    got = agree(path, monkeypatch)
    assert got[0]["skips"]["count"] == 4 and got[0]["used"] == 2
    assert "unreadable CSV (field larger than field limit" in got[0]["skips"]["examples"][0]


def test_a_line_longer_than_the_scanner_keeps(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scanner, "MAX_LINE_BYTES", 5000)
    monkeypatch.setattr(scanner, "BLOCK_BYTES", 1024)
    rows = ['"KERNEL_DISPATCH","k",1,2', '"KERNEL_DISPATCH","' + "x" * 9000 + '",1,2',
            '"KERNEL_DISPATCH","k",1,4'] * 3
    got = agree(write(tmp_path, ",".join(map(quoted, SHORT)) + "\n" + "\n".join(rows) + "\n"),
                monkeypatch)
    assert "a line longer than 5000 bytes" in got[0]["skips"]["examples"]


def test_sums_beyond_int64(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [f'"KERNEL_DISPATCH","huge",1,{2**62}' for _ in range(12)]
    rows += [f'"KERNEL_DISPATCH","huger",1,{"9" * 25}', '"KERNEL_DISPATCH","huger",5,9',
             f'"KERNEL_DISPATCH","huge",{"0" * 30}5,{"0" * 30}7']
    path = write(tmp_path, ",".join(map(quoted, SHORT)) + "\n" + "\n".join(rows) + "\n")
    got = agree(path, monkeypatch)
    assert got[0]["overflow"] is False
    assert got[1][0] == ("huge", float(12 * (2**62 - 1) + 2), 13, float(2**62 - 1))
    assert got[1][1] == ("huger", float(10**25 - 1 + 4), 2, float(10**25 - 2))


def test_many_distinct_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [f'"KERNEL_DISPATCH","kernel_{i % 20000}_{"x" * (i % 20000 % 7)}",{i},{2 * i}'
            for i in range(60000)]
    got = agree(write(tmp_path, ",".join(map(quoted, SHORT)) + "\n" + "\n".join(rows) + "\n"),
                monkeypatch)
    assert len(got[1]) == 20000 and got[0]["used"] == 60000


def test_no_kind_column_and_columns_in_any_order(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    header = '"End_Timestamp","x","Kernel_Name","Start_Timestamp"\n'
    rows = "".join(f'{10 + i},{i},"k{i % 3}",{i}\n' for i in range(100))
    got = agree(write(tmp_path, header + rows + '5,1,"k0",9\n'), monkeypatch)
    assert got[0]["used"] == 100 and got[0]["skips"]["count"] == 1


def test_not_a_file_of_bytes() -> None:
    class Broken:
        def readinto(self, view: memoryview) -> int:
            raise OSError("disk gone")

    columns = trace_columns(b'"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\n')
    with pytest.raises(OSError, match="disk gone"):
        scan_trace_c(Broken(), columns)        # type: ignore[arg-type]


# --- without the extension -------------------------------------------------------------------

def test_without_the_extension_auto_reads_and_c_says_why() -> None:
    fixture = FIXTURES / "rocm7" / "aorta_4242_kernel_trace.csv"
    code = ("import sys; sys.modules['aorta.parsers._rocprof_scan'] = None\n"
            "from pathlib import Path\n"
            "from aorta.parsers.kernel_table import KernelTable\n"
            "from aorta.parsers.rocprof_csv import read_trace\n"
            "from aorta.parsers.rocprof_trace_c import c_available\n"
            f"t = KernelTable(); r = read_trace(Path({str(fixture)!r}), t)\n"
            "print(c_available(), r.used, t.total_ns())\n"
            "try:\n"
            f"    read_trace(Path({str(fixture)!r}), KernelTable(), reader='c')\n"
            "except ImportError as exc:\n"
            "    print('ImportError', 'C compiler' in str(exc))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(SRC)}, check=True)
    assert done.stdout.split("\n")[:2] == ["False 7 575000.0", "ImportError True"]


def test_halves_parsed_at_once_add_up_in_file_order(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A batch is parsed in two halves on two threads: kernels first met in the second half,
    a number past int64 there (that half is parsed again with Python ints), reasons from both
    halves and dropped long lines keep the file's order."""
    monkeypatch.setattr(scanner, "MAX_LINE_BYTES", 20000)
    rows = [f'"KERNEL_DISPATCH","k{i % 5}",{i},{i + 7}' for i in range(120000)]
    rows[3] = '"KERNEL_DISPATCH","k1",9,8'                      # first half: end < start
    rows[100000] = f'"KERNEL_DISPATCH","late",1,{"9" * 30}'    # second half: past int64
    rows[100001] = '"KERNEL_DISPATCH","k2",x,8'
    rows[60000] = '"KERNEL_DISPATCH","' + "y" * 300000 + '",1,2'   # dropped: too long
    got = agree(write(tmp_path, ",".join(map(quoted, SHORT)) + "\n" + "\n".join(rows) + "\n"),
                monkeypatch)
    assert [k[0] for k in got[1]] == ["k0", "k1", "k2", "k4", "k3", "late"]
    assert got[0]["skips"]["examples"] == [
        "row 4: End_Timestamp before Start_Timestamp", "a line longer than 20000 bytes",
        "row 60001: 3 fields, the header has 4"]       # the end of the line dropped
    assert got[0]["skips"]["count"] == 5       # the long line dropped twice, a block each


# --- a file object that misbehaves -------------------------------------------------------------

COLUMNS_SHORT = trace_columns(",".join(map(quoted, SHORT)).encode() + b"\n")
MANY_ROWS = "".join(f'"KERNEL_DISPATCH","k{i % 5}",{i},{i + 7}\n'
                    for i in range(100000)).encode()      # 3.2 MB: 25 batches of 4 KiB blocks


@pytest.fixture
def small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches of 32 blocks of 4 KiB: the halves of one are parsed on threads while the
    reader is called for the next."""
    monkeypatch.setattr(scanner, "BLOCK_BYTES", 4096)


class Source:
    """readinto over bytes, `hook(call, view)` first: it may keep the view or raise."""

    def __init__(self, data: bytes, hook: Any = None) -> None:
        self.data, self.at, self.calls, self.hook = data, 0, 0, hook

    def readinto(self, view: memoryview) -> int:
        self.calls += 1
        if self.hook is not None:
            self.hook(self.calls, view)
        got = self.data[self.at:self.at + len(view)]
        view[:len(got)] = got
        self.at += len(got)
        return len(got)


@pytest.mark.usefixtures("small_blocks")
def test_a_reader_that_keeps_a_view_of_the_buffer_is_refused() -> None:
    """Regression: a readinto keeping a slice of its argument could write into a buffer the
    parser threads were reading, or after it was reallocated or freed (a use after free)."""
    kept: list[memoryview] = []
    with pytest.raises(BufferError, match="readinto kept a view"):
        scan_trace_c(Source(MANY_ROWS, lambda call, view: kept.append(view[:])),  # type: ignore
                     COLUMNS_SHORT)
    kept[0][:5] = b"later"             # the memory was never freed: still safe to write


@pytest.mark.usefixtures("small_blocks")
def test_a_reader_that_keeps_the_view_itself_finds_it_released() -> None:
    kept: list[memoryview] = []
    scan = scan_trace_c(Source(MANY_ROWS, lambda call, view: kept.append(view)),  # type: ignore
                        COLUMNS_SHORT)
    assert scan.used == 100000 and len(kept) > 64
    with pytest.raises(ValueError, match="released"):
        kept[0][:1] = b"x"             # before the fix: a write into freed memory


@pytest.mark.usefixtures("small_blocks")
@pytest.mark.parametrize("call", [1, 2, 33, 40, 500])
@pytest.mark.parametrize("error", [KeyboardInterrupt, OSError])
def test_an_error_from_the_reader_mid_file_stops_the_scan(call: int,
                                                          error: type[BaseException]) -> None:
    """Raised while the halves of the last batch are parsed on threads: they are waited for,
    the error comes out, and the next scan works."""
    def hook(at: int, view: memoryview) -> None:
        if at == call:
            raise error("stop")
    source = Source(MANY_ROWS, hook)
    with pytest.raises(error, match="stop"):
        scan_trace_c(source, COLUMNS_SHORT)                       # type: ignore[arg-type]
    assert source.calls == call
    assert scan_trace_c(Source(MANY_ROWS), COLUMNS_SHORT).used == 100000   # type: ignore


@pytest.mark.parametrize("returned, error", [(1 << 20, OSError), (-1, OSError), ("3", TypeError),
                                             (2.0, TypeError), (1 << 70, OverflowError)])
def test_a_reader_returning_a_bad_length(returned: Any, error: type[Exception]) -> None:
    class Odd:
        def readinto(self, view: memoryview) -> Any:
            return returned
    with pytest.raises(error):
        scan_trace_c(Odd(), COLUMNS_SHORT)                       # type: ignore[arg-type]


def test_a_reader_returning_none_ends_the_file() -> None:
    class NoneYet:
        def readinto(self, view: memoryview) -> None:
            return None
    assert scan_trace_c(NoneYet(), COLUMNS_SHORT).rows == 0       # type: ignore[arg-type]


@pytest.mark.usefixtures("small_blocks")
def test_short_reads_give_the_same_scan() -> None:
    class Trickle(Source):
        def readinto(self, view: memoryview) -> int:
            return super().readinto(view[:1 + self.calls % 977])
    assert scan_trace_c(Trickle(MANY_ROWS), COLUMNS_SHORT) == \
        scan_trace_c(Source(MANY_ROWS), COLUMNS_SHORT)            # type: ignore[arg-type]


def test_an_empty_timestamp_in_the_first_row(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (seen with -fsanitize=undefined): the reason for an empty field copied from a
    NULL pointer."""
    got = agree(write(tmp_path, ",".join(map(quoted, SHORT)) + '\n"KERNEL_DISPATCH","k",,5\n'),
                monkeypatch)
    assert got[0]["skips"]["examples"] == ["row 1: Start_Timestamp is '', not a whole number "
                                           "of ns"]
