"""The pyarrow trace reader against the csv module's: the same report and the same kernels, in
the same order, on every fixture and on generated traces; the clean files it reads itself;
and the files it must hand back to the csv module, each checked to be handed back."""

from __future__ import annotations

import csv
import dataclasses
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rocprof_traces import H6, H7, generated_trace, obvious_reading

import aorta.parsers.rocprof_trace_arrow as arrow
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.rocprof_csv import read_trace, trace_columns

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rocprof"
SRC = Path(__file__).resolve().parents[2] / "src"
TRACES = sorted(p for p in FIXTURES.rglob("*.csv") if "trace" in p.name)
GEMM = "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int, int, int)"
READERS = ["python", pytest.param("arrow", marks=pytest.mark.skipif(
    not arrow.arrow_available(), reason="pyarrow is not installed (the `fast` extra)"))]
needs_arrow = pytest.mark.skipif(not arrow.arrow_available(),
                                 reason="pyarrow is not installed (the `fast` extra)")
# Hundreds of pyarrow calls a test: on Python 3.10 each walks the heap (AUTO_PICKS_ARROW)
heap_walk = pytest.mark.skipif(not arrow.AUTO_PICKS_ARROW, reason="minutes on Python 3.10")


def result(path: Path, reader: str) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """The whole report, reasons included, and every kernel, in table order."""
    table = KernelTable()
    report = read_trace(path, table, reader=reader)
    return (dataclasses.asdict(report),
            [(r.name, r.total_ns, r.calls, r.max_ns) for r in table.rows.values()])


def arrow_reads_it(path: Path) -> bool:
    """Whether pyarrow read the file itself (True) or handed it back to the csv module."""
    with open(path, "rb") as fh:
        columns = trace_columns(fh.readline())
        return arrow.scan_trace_arrow(fh, columns) is not None


def same(path: Path) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """Assert both readers give the same result; pyarrow's."""
    got = result(path, "arrow")
    assert got == result(path, "python")
    return got


def write(tmp_path: Path, data: bytes | str) -> Path:
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return path


# --- every fixture ---------------------------------------------------------------------------

@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("layout", ["rocm6", "rocm7"])
def test_each_reader_gives_the_sample(reader: str, layout: str) -> None:
    table = KernelTable()
    report = read_trace(FIXTURES / layout / "aorta_4242_kernel_trace.csv", table, reader=reader)
    assert report.layout == layout and (report.rows, report.used) == (7, 7)
    assert table.total_ns() == 575000 and table.rows[GEMM].calls == 4
    assert table.rows[GEMM].max_ns == 140000


@needs_arrow
@pytest.mark.parametrize("path", TRACES, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_arrow_equals_python_on_every_fixture(path: Path) -> None:
    same(path)


@needs_arrow
def test_arrow_reads_the_clean_fixtures_itself() -> None:
    refused = {p.name for p in TRACES if p.name != "trace_renamed_columns.csv"
               and not arrow_reads_it(p)}
    assert refused == {"trace_binary_garbage.csv", "trace_end_before_start.csv",
                       "trace_nan_timestamp.csv", "trace_short_row.csv", "trace_truncated.csv",
                       "trace_overflow.csv"}


# --- generated traces ------------------------------------------------------------------------

NAMES = ["k_short", "void g<float, 128>(float const*, float*, int)", 'q<"fast">(int)',
         "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN", "", 'a""b, c']
ODD_TIMESTAMPS = ["", "nan", " 12 ", "-5", "-0", "0x10", "+5", "9" * 20, "9" * 400, "1e3",
                  "\t7", "00012"]


def trace(rows: int, seed: int, header: list[str], eol: str = "\n", *,
          clean: bool = False) -> str:
    """A quarter of the rows with hazards (another Kind, odd names, end < start, odd
    timestamps, a field short or long, blank stray lines), or, `clean`, a tenth of them of
    another Kind and nothing else."""
    if clean:
        return generated_trace(rows, seed, header, eol, names=NAMES, odd_timestamps=[],
                               hazard_rate=0.1, picks=1, kinds=1, strays=[], ragged=False)
    return generated_trace(rows, seed, header, eol, names=NAMES, odd_timestamps=ODD_TIMESTAMPS,
                           hazard_rate=0.25, picks=5, kinds=5, strays=[""])


@needs_arrow
@pytest.mark.parametrize("header", [H6, H7], ids=["rocm6", "rocm7"])
@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("chunk", [arrow.CHUNK_BYTES] + [pytest.param(size, marks=heap_walk)
                                                          for size in (4096, 700)])
def test_arrow_reads_clean_traces_itself(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         header: list[str], eol: str, chunk: int) -> None:
    """Small chunks sum a kernel in many group-bys, and cut reads inside lines."""
    monkeypatch.setattr(arrow, "CHUNK_BYTES", chunk)
    for seed in range(3):
        path = write(tmp_path, trace(3000, seed, header, eol, clean=True))
        assert arrow_reads_it(path)
        got = same(path)
        assert got[0]["filtered"] > 100 and got[0]["used"] > 2500
        counts, _ = obvious_reading(path.read_bytes())
        assert (got[0]["rows"], got[0]["used"]) == (counts["rows"], counts["used"])


@needs_arrow
@pytest.mark.parametrize("header", [H6, H7], ids=["rocm6", "rocm7"])
def test_messy_traces_are_handed_back(tmp_path: Path, header: list[str]) -> None:
    for seed in range(3):
        path = write(tmp_path, trace(3000, seed, header))
        assert not arrow_reads_it(path)
        assert same(path)[0]["skips"]["count"] > 100


@needs_arrow
def test_kernels_keep_the_order_of_their_first_row(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal totals sort by insertion order, so the top-kernels list depends on it."""
    monkeypatch.setattr(arrow, "CHUNK_BYTES", 256)
    rows = [f'"KERNEL_DISPATCH","{name}",{start},{start + 10}'
            for name, start in [("late", 100), ("early", 200), ("late", 300), ("odd", 400)]]
    path = write(tmp_path, '"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\n'
                 + '"MEMORY_COPY","first",1,2\n' + "\n".join(rows * 50) + "\n")
    assert arrow_reads_it(path)
    assert [k[0] for k in same(path)[1]] == ["late", "early", "odd"]


@needs_arrow
def test_names_that_are_not_utf8_are_read_alike(tmp_path: Path) -> None:
    """Names are bytes to both readers, decoded only in the kernel table."""
    path = write(tmp_path, b'"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\n'
                 b'"KERNEL_DISPATCH","k\xff",1,5\n"KERNEL_DISPATCH","k\xfe",1,7\n'
                 b'"KERNEL_DISPATCH","\xe2\x82\xac",1,2\n')
    assert arrow_reads_it(path)
    assert [k[0] for k in same(path)[1]] == ["k\ufffd", "\u20ac"]


# --- what pyarrow hands back -----------------------------------------------------------------

def sample_rows() -> list[str]:
    return (FIXTURES / "rocm7" / "aorta_4242_kernel_trace.csv").read_text().splitlines()


def rocm7_with(row: int, change: Any, copies: int = 40) -> bytes:
    """The ROCm 7 sample's rows `copies` times over, data row `row` changed."""
    lines = sample_rows()
    data = lines[1:] * copies
    data[row - 1] = change(data[row - 1])
    return ("\n".join(lines[:1] + data) + "\n").encode()


START, END = "2000000000050000", "2000000000054000"     # of data row 1
HANDED_BACK = {     # (data row, change)
    "line break in a quoted name": (2, lambda row: row.replace("gemm_kernel", "gemm\n_kernel")),
    "line break in a quoted unread column": (2, lambda row: row.replace('"Agent 4"',
                                                                        '"Agent\n4"')),
    "quote left open in the last column": (2, lambda row: row + ',"1'),
    "quote left open in a middle column": (2, lambda row: row.replace('"Agent 4"', '"Agent 4')),
    "bare carriage return": (2, lambda row: row.replace(",1,", ",1\r,", 1)),
    "a blank line": (2, lambda row: row + "\n"),
    "a field past the csv module's limit": (2, lambda row: row.replace("gemm_kernel",
                                                                       "g" * (1 << 17))),
    "a BOM starting the data": (1, lambda row: "\ufeff" + row),
    "a NUL in an unread column": (3, lambda row: row.replace('"Agent 4"', '"Agent\x004"')),
    "a NUL in a name": (3, lambda row: row.replace("vector_add", "vector\x00add")),
    "a short row": (3, lambda row: row.rsplit(",", 2)[0]),
    "a long row": (3, lambda row: row + ",7"),
    "an empty name": (1, lambda row: row.replace('"__amd_rocclr_fillBufferAligned"', '""')),
    "end before start": (1, lambda row: row.replace(END, "2000000000040000")),
    "a timestamp past int64": (1, lambda row: row.replace(END, "9" + "0" * 25)),
    **{f"a timestamp {odd!r}": (1, lambda row, odd=odd: row.replace(START, odd))
       for odd in ["", " 12", "-0", "+5", "0x10", "1e3", "nan", "\xff12"]},
}


@needs_arrow
@pytest.mark.parametrize("row, change", HANDED_BACK.values(), ids=HANDED_BACK.keys())
def test_what_the_csv_module_must_read(tmp_path: Path, row: int, change: Any) -> None:
    path = write(tmp_path, rocm7_with(row, change))
    assert not arrow_reads_it(path)
    same(path)


@needs_arrow
def test_quoted_timestamps_and_crlf_are_read_alike(tmp_path: Path) -> None:
    path = write(tmp_path, rocm7_with(1, lambda row: row.replace(START, f'"{START}"'))
                 .replace(b"\n", b"\r\n"))
    assert arrow_reads_it(path)
    assert same(path)[0]["used"] == 280


@needs_arrow
def test_a_cut_last_row_is_handed_back(tmp_path: Path) -> None:
    path = write(tmp_path, rocm7_with(1, lambda row: row).rstrip(b"\n")[:-5])
    assert not arrow_reads_it(path)
    assert same(path)[0]["skips"]["cut"]


@needs_arrow
def test_sums_that_may_pass_int64_are_handed_back(tmp_path: Path) -> None:
    rows = [f'"KERNEL_DISPATCH","huge",1,{10**18}' for _ in range(12)]
    path = write(tmp_path, '"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\n'
                 + "\n".join(rows) + "\n")
    assert not arrow_reads_it(path)
    assert same(path)[1] == [("huge", float(12 * (10**18 - 1)), 12, float(10**18 - 1))]


@needs_arrow
def test_lines_near_the_csv_field_limit_are_handed_back(tmp_path: Path) -> None:
    """The csv module refuses a field past its limit; pyarrow would read it."""
    path = write(tmp_path, rocm7_with(2, lambda row: row))
    longest = max(map(len, path.read_bytes().splitlines()))
    limit = csv.field_size_limit(longest + 10)
    try:
        assert not arrow_reads_it(path)       # a line may be as long as the limit allows
        assert same(path)[0]["used"] == 280
        csv.field_size_limit(2 * longest + 2)
        assert arrow_reads_it(path)
        csv.field_size_limit(50)         # past it: every name but __amd_rocclr_fillBufferAligned
        assert same(path)[0]["skips"]["count"] == 240
    finally:
        csv.field_size_limit(limit)


class Watched:
    """A file that counts the reads made after `returned` is set."""

    def __init__(self, fh: Any) -> None:
        self.fh, self.returned, self.late_reads = fh, False, 0
        self.tell, self.seek = fh.tell, fh.seek

    def read(self, size: int = -1) -> bytes:
        self.late_reads += self.returned
        return self.fh.read(size)


@needs_arrow
def test_no_read_reaches_the_file_once_pyarrow_hands_it_back(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: pyarrow's streaming reader, given the file, read it ahead on a thread of
    its own, which at times went on reading after a parse error in the first block, while
    the csv module read the file again from the start (about one try in four), and could
    hang the interpreter's exit. pyarrow now parses chunks read here."""
    monkeypatch.setattr(arrow, "CHUNK_BYTES", 4096)
    path = write(tmp_path, rocm7_with(5, lambda row: row + ",7"))   # a long row, in chunk 1
    late = 0
    for _ in range(20):
        with open(path, "rb") as fh:
            columns = trace_columns(fh.readline())
            watched = Watched(fh)
            assert arrow.scan_trace_arrow(watched, columns) is None    # type: ignore[arg-type]
            watched.returned = True
            time.sleep(0.002)
        late += watched.late_reads
    assert late == 0


SPLICES = ["\n", "\r\n", "\r", '"', '"\n', ",", "\x00", "\ufeff", "junk", '""', "\xff"]


@needs_arrow
@pytest.mark.parametrize("seed", range(40))
def test_garbage_reads_as_the_csv_module_reads_it(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch,
                                                  seed: int) -> None:
    """Random bytes spliced anywhere in a clean trace: whatever pyarrow accepts (about two
    files in three here), it reads as the csv module does."""
    rnd = random.Random(seed)
    monkeypatch.setattr(arrow, "CHUNK_BYTES", rnd.choice([512, 4096, 1 << 20]))
    monkeypatch.setattr(arrow, "BLOCK_BYTES", rnd.choice([1024, 1 << 20]))
    text = list(trace(300, seed, rnd.choice([H6, H7]), rnd.choice(["\n", "\r\n"]), clean=True))
    data_start = text.index("\n") + 1
    for _ in range(rnd.randrange(0, 3)):
        text.insert(rnd.randrange(data_start, len(text)), rnd.choice(SPLICES))
    path = write(tmp_path, "".join(text).encode("utf-8" if seed % 2 else "latin-1", "replace"))
    limit = csv.field_size_limit(rnd.choice([1000, 131072]))
    try:
        same(path)
    finally:
        csv.field_size_limit(limit)


# --- choosing the reader ------------------------------------------------------------------------

def test_an_unknown_reader_is_refused() -> None:
    with pytest.raises(ValueError, match="reader must be one of auto, arrow, python, got 'c'"):
        read_trace(TRACES[0], KernelTable(), reader="c")


@needs_arrow
@pytest.mark.skipif(not arrow.AUTO_PICKS_ARROW, reason="auto uses the csv module on Python 3.10")
def test_auto_reads_with_pyarrow_when_it_imports(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[Path] = []

    def counted(fh: Any, columns: Any) -> Any:
        calls.append(fh.name)
        return arrow.scan_trace_arrow(fh, columns)
    monkeypatch.setattr("aorta.parsers.rocprof_csv.scan_trace_arrow", counted)
    table = KernelTable()
    report = read_trace(FIXTURES / "rocm7" / "aorta_4242_kernel_trace.csv", table)
    assert len(calls) == 1 and (report.rows, report.used, table.total_ns()) == (7, 7, 575000)


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(SRC)}, check=True)
    return done.stdout.strip()


def test_importing_the_readers_does_not_import_pyarrow() -> None:
    out = run_python("import sys, aorta.parsers.rocprof_csv, aorta.collectors.rocprof.collector\n"
                     "print('pyarrow' in sys.modules)")
    assert out == "False"


def test_without_pyarrow_auto_reads_with_python_and_arrow_says_why() -> None:
    fixture = FIXTURES / "rocm7" / "aorta_4242_kernel_trace.csv"
    out = run_python(
        "import sys; sys.modules['pyarrow'] = None\n"
        "from pathlib import Path\n"
        "from aorta.parsers.kernel_table import KernelTable\n"
        "from aorta.parsers.rocprof_csv import read_trace\n"
        "from aorta.parsers.rocprof_trace_arrow import arrow_available\n"
        f"t = KernelTable(); r = read_trace(Path({str(fixture)!r}), t)\n"
        "print(arrow_available(), r.used, t.total_ns())\n"
        "try:\n"
        f"    read_trace(Path({str(fixture)!r}), KernelTable(), reader='arrow')\n"
        "except ImportError:\n"
        "    print('ImportError')\n")
    assert out.splitlines() == ["False 7 575000.0", "ImportError"]
