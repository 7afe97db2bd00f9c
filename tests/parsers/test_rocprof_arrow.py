"""The pyarrow trace reader against the pure-Python scanner: the same report and the same
kernels, in the same order, on every fixture and on generated messy traces; and the files it
must hand back to the csv module, each checked to be handed back."""

from __future__ import annotations

import csv
import dataclasses
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import aorta.parsers.rocprof_trace_arrow as arrow
import aorta.parsers.rocprof_trace_scan as scanner
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.rocprof_csv import read_trace, trace_columns
from rocprof_traces import H6, H7, generated_trace

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rocprof"
SRC = Path(__file__).resolve().parents[2] / "src"
TRACES = sorted(p for p in FIXTURES.rglob("*.csv") if "trace" in p.name)
GEMM = "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int, int, int)"
READERS = ["python", pytest.param("arrow", marks=pytest.mark.skipif(
    not arrow.arrow_available(), reason="pyarrow is not installed (the `fast` extra)"))]
needs_arrow = pytest.mark.skipif(not arrow.arrow_available(),
                                 reason="pyarrow is not installed (the `fast` extra)")


def result(path: Path, reader: str) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """The whole report and every kernel, in table order."""
    table = KernelTable()
    report = read_trace(path, table, reader=reader)
    fields = dataclasses.asdict(report)
    # The two readers word their reasons differently; what they leave out must be the same.
    fields["skips"] = (report.skips.count, bool(report.skips.cut))
    return fields, [(r.name, r.total_ns, r.calls, r.max_ns) for r in table.rows.values()]


def arrow_reads_it(path: Path) -> bool:
    """Whether pyarrow read the file itself (True) or handed it back to the csv module."""
    with open(path, "rb") as fh:
        columns = trace_columns(fh.readline())
        return arrow.scan_trace_arrow(fh, columns) is not None


def csv_reference(path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """What `scan_trace` gives when every block goes through the csv module."""
    with monkeypatch.context() as patch:
        patch.setattr(scanner, "row_shape", lambda *args: None)
        return result(path, "python")


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
    assert result(path, "arrow") == result(path, "python")


@needs_arrow
def test_arrow_reads_the_real_and_broken_fixtures_itself() -> None:
    refused = {p.name for p in TRACES if p.name != "trace_renamed_columns.csv"
               and not arrow_reads_it(p)}
    assert refused == {"trace_binary_garbage.csv"}     # bare \r, invalid UTF-8, NULs


# --- generated traces ------------------------------------------------------------------------

NAMES = ["k_short", "void g<float, 128>(float const*, float*, int)", 'q<"fast">(int)',
         "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN", "", 'a""b, c']
ODD_TIMESTAMPS = ["", "nan", " 12 ", "-5", "-0", "0x10", "+5", "9" * 20, "9" * 400, "1e3",
                  "\t7", "00012"]


def messy_trace(rows: int, seed: int, header: list[str], eol: str = "\n") -> str:
    """A quarter of the rows with hazards (the first five kinds), blank stray lines."""
    return generated_trace(rows, seed, header, eol, names=NAMES, odd_timestamps=ODD_TIMESTAMPS,
                           hazard_rate=0.25, picks=7, kinds=5, strays=[""])


@needs_arrow
@pytest.mark.parametrize("header", [H6, H7], ids=["rocm6", "rocm7"])
@pytest.mark.parametrize("eol", ["\n", "\r\n"], ids=["lf", "crlf"])
@pytest.mark.parametrize("chunk, block", [(arrow.CHUNK_BYTES, arrow.PARSE_BLOCK_BYTES),
                                          (8192, 1024), (600, 1024)])
def test_arrow_equals_python_on_messy_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                             header: list[str], eol: str, chunk: int,
                                             block: int) -> None:
    monkeypatch.setattr(arrow, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(arrow, "PARSE_BLOCK_BYTES", block)
    for seed in range(3):
        path = tmp_path / f"messy{seed}_kernel_trace.csv"
        path.write_bytes(messy_trace(3000, seed, header, eol).encode())
        assert arrow_reads_it(path)
        expected = result(path, "python")
        assert expected[0]["skips"][0] > 100 and expected[0]["filtered"] > 10
        assert result(path, "arrow") == expected


@needs_arrow
@pytest.mark.parametrize("ending", [b"", b"\n", b"\n\n\n", b"\n\r\n", b'\n"KERNEL_DISPATCH",4,'])
def test_trailing_blank_lines_and_a_cut_last_line(tmp_path: Path, ending: bytes) -> None:
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(messy_trace(500, 7, H6).encode().rstrip(b"\n") + ending)
    assert arrow_reads_it(path)
    assert result(path, "arrow") == result(path, "python")


@needs_arrow
def test_kernels_keep_the_order_of_their_first_row(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Equal totals sort by insertion order, so the top-kernels list depends on it."""
    monkeypatch.setattr(arrow, "CHUNK_BYTES", 256)
    rows = [f'"KERNEL_DISPATCH","{name}",{start},{start + 10}'
            for name, start in [("late", 100), ("early", 200), ("late", 300)]]
    rows.insert(1, '"KERNEL_DISPATCH","odd", 400 ,410')       # read in Python, row by row
    rows.append('"KERNEL_DISPATCH","early",500,490')           # end < start
    path = tmp_path / "x_kernel_trace.csv"
    path.write_text('"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\n'
                    + "\n".join(rows * 50) + "\n")
    assert arrow_reads_it(path)
    got = result(path, "arrow")
    assert [k[0] for k in got[1]] == ["late", "odd", "early"]
    assert got == result(path, "python")


@needs_arrow
def test_sums_beyond_int64_are_added_exactly(tmp_path: Path) -> None:
    rows = [f'"KERNEL_DISPATCH","huge",1,{10**18}' for _ in range(12)]
    rows += [f'"KERNEL_DISPATCH","huger",1,{"9" * 25}']                # beyond int64
    path = tmp_path / "x_kernel_trace.csv"
    path.write_text('"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\n'
                    + "\n".join(rows) + "\n")
    assert arrow_reads_it(path)
    got = result(path, "arrow")
    assert got == result(path, "python")
    assert got[1][0] == ("huge", float(12 * (10**18 - 1)), 12, float(10**18 - 1))


# --- what pyarrow hands back -----------------------------------------------------------------

def sample_rows() -> list[str]:
    text = (FIXTURES / "rocm7" / "aorta_4242_kernel_trace.csv").read_text()
    return text.splitlines()


def rocm7_with(row: int, change: Any) -> bytes:
    lines = sample_rows() * 40
    lines[row] = change(lines[row])
    return ("\n".join(lines[:1] + [x for x in lines[1:] if not x.startswith('"Guid"')])
            + "\n").encode()


HANDED_BACK = {     # (data row, change)
    "line break in a quoted name": (2, lambda row: row.replace("gemm_kernel", "gemm\n_kernel")),
    "line break in a quoted unread column": (2, lambda row: row.replace('"Agent 4"',
                                                                        '"Agent\n4"')),
    "quote left open in the last column": (2, lambda row: row + ',"1'),
    "quote left open in a middle column": (2, lambda row: row.replace('"Agent 4"', '"Agent 4')),
    "bare carriage return": (2, lambda row: row.replace(",1,", ",1\r,", 1)),
    "a line of 64 KiB": (2, lambda row: row.replace("gemm_kernel", "g" * (1 << 16))),
    "a BOM starting the data": (1, lambda row: "\ufeff" + row),
}


@needs_arrow
@pytest.mark.parametrize("row, change", HANDED_BACK.values(), ids=HANDED_BACK.keys())
def test_what_the_csv_module_must_read(tmp_path: Path, row: int, change: Any) -> None:
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(rocm7_with(row, change))
    assert not arrow_reads_it(path)
    assert result(path, "arrow") == result(path, "python")


@needs_arrow
def test_a_short_row_that_is_not_utf8_is_handed_back(tmp_path: Path) -> None:
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(rocm7_with(3, lambda row: row.rsplit(",", 2)[0]).replace(b"vector_add",
                                                                             b"vector\xffadd"))
    assert not arrow_reads_it(path)
    assert result(path, "arrow") == result(path, "python")


@needs_arrow
def test_a_lowered_csv_field_limit_hands_every_file_back(tmp_path: Path) -> None:
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(rocm7_with(1, lambda row: row))
    limit = csv.field_size_limit(1000)
    try:
        assert not arrow_reads_it(path)
    finally:
        csv.field_size_limit(limit)
    assert arrow_reads_it(path)


SPLICES = ["\n", "\r\n", "\r", '"', '"\n', ",", "\x00", "\ufeff", "junk", '""']


@needs_arrow
@pytest.mark.parametrize("seed", range(40))
def test_garbage_read_by_arrow_equals_the_csv_module(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     seed: int) -> None:
    """Random bytes spliced anywhere: whatever pyarrow accepts, it reads as the csv module."""
    rnd = random.Random(seed)
    monkeypatch.setattr(arrow, "CHUNK_BYTES", rnd.choice([256, 4096, 1 << 20]))
    monkeypatch.setattr(arrow, "PARSE_BLOCK_BYTES", rnd.choice([1024, 4096]))
    text = list(messy_trace(300, seed, rnd.choice([H6, H7])))
    for _ in range(rnd.randrange(1, 4)):
        text.insert(rnd.randrange(400, len(text)), rnd.choice(SPLICES))
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes("".join(text).encode("utf-8" if seed % 2 else "latin-1", "replace"))
    if arrow_reads_it(path):
        assert result(path, "arrow") == csv_reference(path, monkeypatch)
    else:
        assert result(path, "arrow") == result(path, "python")


# --- choosing the reader ------------------------------------------------------------------------

def test_an_unknown_reader_is_refused() -> None:
    with pytest.raises(ValueError, match="reader must be one of auto, c, arrow, python"):
        read_trace(TRACES[0], KernelTable(), reader="fast")


def run_python(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(SRC)}, check=True)
    return done.stdout.strip()


def test_importing_the_readers_does_not_import_pyarrow() -> None:
    out = run_python("import sys, aorta.parsers.rocprof_csv, aorta.collectors.rocprof\n"
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
