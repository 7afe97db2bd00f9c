"""rocprofv3 CSV readers against real published output, files written from the documented
schemas, broken files, and generated traces checked row for row against the csv module.
The trace reader's hostile inputs are in test_rocprof_trace_scan.py."""

from __future__ import annotations

import csv
import io
import random
from pathlib import Path

import pytest
from rocprof_traces import obvious_reading

from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.rocprof_csv import FileReport, read_stats, read_trace, trace_columns
from aorta.parsers.rocprof_trace_scan import BLOCK_BYTES

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rocprof"
GEMM = "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int, int, int)"
VADD = "vector_add(float*, float const*, float const*, int)"
FILL = "__amd_rocclr_fillBufferAligned"
SAMPLE = {GEMM: (530000.0, 4), VADD: (41000.0, 2), FILL: (4000.0, 1)}
H7 = ('"Guid","Kind","Agent_Id","Queue_Id","Stream_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
      '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp","LDS_Block_Size",'
      '"Scratch_Size","VGPR_Count","Accum_VGPR_Count","SGPR_Count","Workgroup_Size_X",'
      '"Workgroup_Size_Y","Workgroup_Size_Z","Grid_Size_X","Grid_Size_Y","Grid_Size_Z"')


def kernels(table: KernelTable) -> dict[str, tuple[float, int | None]]:
    return {r.name: (r.total_ns, r.calls) for r in table.rows.values()}


def stats(path: Path) -> tuple[KernelTable, FileReport]:
    table = KernelTable()
    return table, read_stats(path, table)


def trace(path: Path) -> tuple[KernelTable, FileReport]:
    table = KernelTable()
    return table, read_trace(path, table)


# --- real published output ------------------------------------------------------------------

def test_jacobi_stats_real_output() -> None:
    table, report = stats(FIXTURES / "jacobi-stats" / "jacobi_kernel_stats.csv")
    assert (report.rows, report.used, report.skips.count, report.untrusted_calls) == (6, 6, 0, 0)
    assert len(table) == 6
    assert table.total_ns() == 1241356755
    metrics = table.metrics("rocprof")
    assert metrics["rocprof_kernel_count"] == 5003     # 1000 + 1001 + 1000 + 1000 + 1001 + 1
    assert metrics["rocprof_top_kernels"][0] == "JacobiIterationKernel"
    assert metrics["rocprof_top_kernel_ms"] == pytest.approx(537.449866)
    assert table.rows["NormKernel1"].max_ns == 418563            # MaxNs, not the total


def test_lumi_trace_rocm6_real_output() -> None:
    table, report = trace(FIXTURES / "lumi-trace-6x" / "74441_kernel_trace.csv")
    assert report.layout == "rocm6"
    assert (report.rows, report.used, report.skips.count, report.filtered) == (4, 4, 0, 0)
    assert table.total_ns() == 177757457
    taylor = table.rows["taylor_base(float*, float*, unsigned long, unsigned long)"]
    assert taylor.calls == 3
    assert taylor.total_ns == 177757457 - 10080        # all but __amd_rocclr_initHeap
    assert taylor.max_ns == 59314513


def test_omp_trace_rocm7_real_output() -> None:
    table, report = trace(FIXTURES / "omp-trace-7x" / "out_kernel_trace.csv")
    assert report.layout == "rocm7"
    assert (report.rows, report.used) == (9, 9)
    assert len(table) == 4 and table.total_ns() == 551280
    norm = table.rows["__omp_offloading_30_57b9f__QMnorm_modPnorm_l23"]
    assert norm.calls == 3 and norm.total_ns == 100080 + 90680 + 95000


# --- both generations and the stats file agree -----------------------------------------------

@pytest.mark.parametrize("layout", ["rocm6", "rocm7"])
def test_both_trace_generations_give_the_sample(layout: str) -> None:
    table, report = trace(FIXTURES / layout / "aorta_4242_kernel_trace.csv")
    assert report.layout == layout
    assert kernels(table) == SAMPLE
    assert table.rows[GEMM].max_ns == 140000


def test_stats_give_the_sample() -> None:
    table, _ = stats(FIXTURES / "stats" / "aorta_4242_kernel_stats.csv")
    assert kernels(table) == SAMPLE


def test_per_process_files_add_up_to_the_sample() -> None:
    folder = FIXTURES / "no-output-file" / "gpu-node-1"
    from_stats, from_traces = KernelTable(), KernelTable()
    for pid in ("4242", "4243"):
        read_stats(folder / f"{pid}_kernel_stats.csv", from_stats)
        read_trace(folder / f"{pid}_kernel_trace.csv", from_traces)
    assert kernels(from_stats) == SAMPLE
    assert kernels(from_traces) == SAMPLE


def test_columns_are_found_by_name_in_any_order(tmp_path: Path) -> None:
    path = tmp_path / "reordered_kernel_trace.csv"
    path.write_text('"End_Timestamp","Kernel_Name","Start_Timestamp","Kind"\n'
                    '150,"k<a, b>",100,"KERNEL_DISPATCH"\n70,"k<a, b>",40,"KERNEL_DISPATCH"\n')
    table, report = trace(path)
    assert kernels(table) == {"k<a, b>": (80.0, 2)} and report.layout == "unknown"


def test_a_header_mixing_rocm6_and_rocm7_columns_is_read_and_called_mixed(tmp_path: Path) -> None:
    path = tmp_path / "mixed_kernel_trace.csv"
    path.write_text(H7.replace('"SGPR_Count"', '"SGPR_Count","Private_Segment_Size"') + "\n" +
                    '"g","KERNEL_DISPATCH","Agent 4",1,0,9,1,1,"k",1,100,180,0,0,32,0,48,0,'
                    '256,1,1,64,1,1\n')
    table, report = trace(path)
    assert kernels(table) == {"k": (80.0, 1)} and report.layout == "mixed"


@pytest.mark.parametrize("header", ['"Kind","Kernel_Name","Start_Timestamp","End_Timestamp",'
                                    '"Kernel_Name"', '"Kind","kind","Kernel_Name",'
                                    '"Start_Timestamp","End_Timestamp"'])
def test_a_column_read_named_twice_is_refused(header: str) -> None:
    with pytest.raises(ValueError, match=r"the header names K\w+ more than once"):
        trace_columns(header)


def test_a_stats_column_named_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "dup_kernel_stats.csv"
    path.write_text('"Name","Calls","TotalDurationNs","TotalDurationNs"\n"k",1,5,7\n')
    table, report = stats(path)
    assert len(table) == 0 and "TotalDurationNs more than once" in report.note


def test_trace_columns_names_what_is_missing() -> None:
    with pytest.raises(ValueError, match="no column Kernel_Name, Start_Timestamp"):
        trace_columns(b'"Kind","KernelName","End_Timestamp"\n')
    columns = trace_columns(b'\xef\xbb\xbf"kernel_name","START_TIMESTAMP","End_Timestamp"\r\n')
    assert (columns.kind, columns.name, columns.start, columns.end) == (None, 0, 1, 2)


# --- broken stats ---------------------------------------------------------------------------

def test_stats_nan_and_negative_totals_skip_the_row() -> None:
    for name in ("stats_nan_total.csv", "stats_negative_total.csv"):
        table, report = stats(FIXTURES / "broken" / name)
        assert GEMM not in table.rows and report.skips.count == 1
        assert kernels(table) == {VADD: SAMPLE[VADD], FILL: SAMPLE[FILL]}


def test_untrusted_calls_are_omitted_not_guessed() -> None:
    table, report = stats(FIXTURES / "broken" / "stats_untrusted_calls.csv")
    assert report.untrusted_calls == 3                 # -4, 2.5, empty
    assert all(r.calls is None for r in table.rows.values())
    metrics = table.metrics("rocprof")
    assert "rocprof_kernel_count" not in metrics
    assert metrics["rocprof_gpu_time_ms"] == pytest.approx(0.575)


def test_whole_float_calls_are_trusted() -> None:
    table, report = stats(FIXTURES / "broken" / "stats_float_calls.csv")
    assert report.untrusted_calls == 0 and table.metrics("x")["x_kernel_count"] == 7


def test_stats_overflow_values() -> None:
    table, report = stats(FIXTURES / "broken" / "stats_overflow.csv")
    assert GEMM not in table.rows                      # total 1e999 is infinite
    assert table.rows[VADD].calls is None              # a 29-digit count is not a real count
    assert report.untrusted_calls == 1
    assert "x_kernel_count" not in table.metrics("x")


def test_stats_truncated_and_renamed_and_empty() -> None:
    _, truncated = stats(FIXTURES / "stats-truncated-trace-ok" / "aorta_4242_kernel_stats.csv")
    assert (truncated.rows, truncated.used, truncated.skips.count) == (1, 0, 1)
    _, renamed = stats(FIXTURES / "stats-renamed-columns-trace-ok" / "aorta_4242_kernel_stats.csv")
    assert renamed.used == 0 and "no column Name, TotalDurationNs" in renamed.note
    _, empty = stats(FIXTURES / "broken" / "empty.csv")
    assert empty.note == "empty file"


def test_stats_without_calls_column(tmp_path: Path) -> None:
    path = tmp_path / "x_kernel_stats.csv"
    path.write_text('"Name","TotalDurationNs"\n"a",100\n"b",50\n')
    table, report = stats(path)
    assert report.untrusted_calls == 2 and table.total_ns() == 150


def test_a_stats_row_holding_a_nul_is_left_out(tmp_path: Path) -> None:
    """On every Python: 3.10's csv module refuses a NUL, 3.11's reads it as text."""
    path = tmp_path / "x_kernel_stats.csv"
    path.write_bytes(b'"Name","Calls","TotalDurationNs"\n"a",1,100\n"b\0c",1,50\n'
                     b'"d",1,7\0\n"e",2,30\n')
    table, report = stats(path)
    assert kernels(table) == {"a": (100.0, 1), "e": (30.0, 2)}
    assert (report.rows, report.used, report.skips.count) == (4, 2, 2)
    assert report.skips.examples == ["row 2: a NUL byte (a malformed row)",
                                     "row 3: a NUL byte (a malformed row)"]
    path.write_bytes(b'"Name","Calls\0","TotalDurationNs"\n"a",1,100\n')
    assert stats(path)[1].note == "unreadable header: a NUL byte"


# --- broken traces --------------------------------------------------------------------------

@pytest.mark.parametrize("name, total, count, skipped, filtered", [
    ("trace_nan_timestamp.csv", 571000, 6, 1, 0),
    ("trace_end_before_start.csv", 450000, 6, 1, 0),
    ("trace_other_kinds.csv", 445000, 6, 0, 1),
    ("trace_short_row.csv", 555000, 6, 1, 0),
    ("trace_truncated.csv", 435000, 6, 1, 0),
    ("trace_crlf.csv", 575000, 7, 0, 0),
])
def test_broken_trace_rows_are_left_out_and_counted(name: str, total: int, count: int,
                                                     skipped: int, filtered: int) -> None:
    table, report = trace(FIXTURES / "broken" / name)
    assert table.total_ns() == total
    assert sum(r.calls or 0 for r in table.rows.values()) == count == report.used
    assert (report.skips.count, report.filtered) == (skipped, filtered)


def test_truncated_trace_says_so() -> None:
    _, report = trace(FIXTURES / "broken" / "trace_truncated.csv")
    assert "cut short" in report.skips.cut and report.skips.count == 1


def test_escaped_quote_in_a_name_is_read_exactly() -> None:
    table, report = trace(FIXTURES / "broken" / "trace_escaped_quote.csv")
    assert report.used == 8
    assert table.rows['vector_add<"fast">(float*, float const*, float const*, int)'].calls == 1
    assert table.rows[VADD].calls == 2


def test_quoted_timestamps_are_read(tmp_path: Path) -> None:
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(b'"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\r\n'
                     b'"KERNEL_DISPATCH","k","10","15"\r\n"KERNEL_DISPATCH","k",20,27\r\n')
    table, report = trace(path)
    assert (report.used, report.skips.count, table.rows["k"].total_ns) == (2, 0, 12.0)


def test_names_that_are_not_utf8_are_decoded_in_the_table(tmp_path: Path) -> None:
    """Names are bytes while summed; two that decode alike are one kernel in the table."""
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(b'"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\n'
                     b'"KERNEL_DISPATCH","k\xff",1,5\n"KERNEL_DISPATCH","k\xfe",1,7\n'
                     b'"KERNEL_DISPATCH","\xe2\x82\xac",1,2\n')
    table, _ = trace(path)
    assert [(r.name, r.calls) for r in table.rows.values()] == [("k\ufffd", 2), ("\u20ac", 1)]


def test_renamed_trace_columns_give_nothing_and_say_why() -> None:
    table, report = trace(FIXTURES / "broken" / "trace_renamed_columns.csv")
    assert not table.rows and "no column Kernel_Name, Start_Timestamp" in report.note


def test_a_header_the_csv_module_refuses_is_a_note(tmp_path: Path) -> None:
    """Rows ended by bare carriage returns: the first line read holds them all."""
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(b'"Kind","Kernel_Name","Start_Timestamp","End_Timestamp"\r'
                     b'"KERNEL_DISPATCH","k",1,2\r')
    table, report = trace(path)
    assert not table.rows and report.note.startswith("unreadable header (new-line character")


def test_trace_overflow_is_flagged() -> None:
    _, report = trace(FIXTURES / "broken" / "trace_overflow.csv")
    assert report.overflow and "overflows" in report.note


def test_binary_garbage_is_skipped_not_crashing() -> None:
    table, report = trace(FIXTURES / "broken" / "trace_binary_garbage.csv")
    assert not table.rows and report.skips.count == report.rows > 0


def test_header_only_files_have_no_rows() -> None:
    for name in ("aorta_4242_kernel_trace.csv", "aorta_4242_kernel_stats.csv"):
        reader = read_stats if "stats" in name else read_trace
        table = KernelTable()
        report = reader(FIXTURES / "header-only" / name, table)
        assert (report.rows, report.note, len(table)) == (0, "", 0)


def test_unreadable_file_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        read_trace(tmp_path / "absent_kernel_trace.csv", KernelTable())


def test_a_line_without_end_is_dropped_with_bounded_memory(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    import aorta.parsers.rocprof_trace_scan as scan

    monkeypatch.setattr(scan, "MAX_LINE_BYTES", 4 * BLOCK_BYTES)
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes(H7.encode() + b"\n" + b"7" * (10 * BLOCK_BYTES))
    _, report = trace(path)
    assert report.skips.count == report.rows == 1
    assert "a line longer than" in report.skips.examples[0]


# --- a generated trace equals the csv module, row for row ------------------------------------

CLEAN_NAMES = ["k_short", "void gemm<float, 128, 64>(float const*, float*, int)",
               "__amd_rocclr_copyBuffer", "Cijk_Ailk_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN"]
HAZARD_NAMES = ['q<"x">(int)', ""]


def messy_trace(rows: int, seed: int) -> str:
    """ROCm 7 rows, clean except in every fifth stretch of 1000 rows, where every hazard is
    mixed in: quotes in names, empty names, other Kinds, end < start, short rows, non-numbers,
    correlation ids changing width."""
    rnd = random.Random(seed)
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    out.write(H7 + "\n")
    clock = 10**15
    for i in range(rows):
        hazards = i % 5000 < 1000
        clock += rnd.randrange(100, 5000)
        start, end = clock, clock + rnd.randrange(-3 if hazards else 0, 90000)
        kind = "MEMORY_COPY" if hazards and rnd.random() < 0.02 else "KERNEL_DISPATCH"
        names = CLEAN_NAMES + HAZARD_NAMES if hazards else CLEAN_NAMES
        correlation = i * 13 if hazards and rnd.random() < 0.1 else 10**6 + i
        row: list[object] = ["0000-guid", kind, "Agent 4", 1, 0, 77, i, 3, rnd.choice(names),
                             correlation, start, end, 0, 0, 16, 0, 32, 256, 1, 1, 4096, 1, 1]
        if hazards and rnd.random() < 0.01:
            row = row[:-3]
        elif hazards and rnd.random() < 0.01:
            row[10] = "nan"
        writer.writerow(row)
    return out.getvalue()


def reference(text: str) -> dict[str, tuple[int, int]]:
    totals: dict[str, tuple[int, int]] = {}
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader)
    for row in reader:
        if len(row) != len(header) or row[1] != "KERNEL_DISPATCH" or not row[8]:
            continue
        if not (row[10].isdigit() and row[11].isdigit()) or int(row[11]) < int(row[10]):
            continue
        total, count = totals.get(row[8], (0, 0))
        totals[row[8]] = (total + int(row[11]) - int(row[10]), count + 1)
    return totals


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_generated_trace_matches_the_csv_module(tmp_path: Path, seed: int) -> None:
    text = messy_trace(20000, seed)
    path = tmp_path / "messy_kernel_trace.csv"
    path.write_text(text)
    table, report = trace(path)
    assert {k: (int(v[0]), v[1]) for k, v in kernels(table).items()} == reference(text)
    assert report.rows == 20000 and report.skips.count > 100


# --- rows a faster scanner once took and the csv module refuses (issue 12.1) ------------------

ROW = ('"00006409-00d1","KERNEL_DISPATCH","Agent 4",1,0,714789,{i},3,"{name}",{i},'
       '{start},{end},8456,0,128,0,96,256,1,1,256,1,1')


@pytest.mark.parametrize("bad, left_out, filtered", [
    ('"00006409-00d1","KERNEL_DISPATCH","Agent 4",1,714789,777,3,"k",777,1077700,1077750,8456,'
     '0,128,0,96,256,1,1,256,1,1', 1, 0),                      # a field missing before the name
    ('"00006409-00d1","KERNEL_DISPATCH"x,"Agent 4",1,0,714789,777,3,"k",777,1077700,1077750,'
     '8456,0,128,0,96,256,1,1,256,1,1', 0, 1),                 # text after a closing quote
    ('"00006409-00d1","KERNEL_DISPATCH","Agent 4",1,0,71\r4789,777,3,"k",777,1077700,1077750,'
     '8456,0,128,0,96,256,1,1,256,1,1', 2, 0),                 # a bare carriage return
    ('"00006409-00d1",KERNEL_DISPATCH","Agent 4","1,0,714789,777,3,"k",777,1077700,1077750,'
     '8456,0,128,0,96,256,1,1,256,1,1', 1, 0),                 # quotes that open no field
])
def test_rows_the_csv_module_refuses_are_left_out(tmp_path: Path, bad: str, left_out: int,
                                                  filtered: int) -> None:
    """Each read as the csv module reads it: `"KERNEL_DISPATCH"x` is the Kind
    KERNEL_DISPATCHx, and a bare carriage return ends a row."""
    rows = [ROW.format(i=i, name="k", start=1000000 + 100 * i, end=1000000 + 100 * i + 50)
            for i in range(100, 140)]
    rows.insert(20, bad)
    path = tmp_path / "x_kernel_trace.csv"
    path.write_bytes((H7 + "\n" + "\n".join(rows) + "\n").encode())
    table, report = trace(path)
    counts, _ = obvious_reading(path.read_bytes())
    seen = 40 + left_out + filtered
    assert (report.rows, report.used, report.skips.count, report.filtered) == \
        (seen, 40, left_out, filtered)
    assert (counts["rows"], counts["used"], counts["skipped"], counts["filtered"]) == \
        (seen, 40, left_out, filtered)
    assert kernels(table) == {"k": (50.0 * 40, 40)}


def test_a_long_row_and_a_short_row_do_not_cancel_out(tmp_path: Path) -> None:
    """One field too many in one row and one too few in the next are both left out, as the
    csv module leaves them out."""
    path = tmp_path / "x_kernel_trace.csv"
    path.write_text('"Kind","Kernel_Name","Start_Timestamp","End_Timestamp","X","Y"\n'
                    + '"KERNEL_DISPATCH","k",1,5,1,2\n' * 3
                    + '"KERNEL_DISPATCH","k",1,5,1,2,3\n"KERNEL_DISPATCH","k",1,5,1\n'
                    + '"KERNEL_DISPATCH","k",1,5,1,2\n')
    table, report = trace(path)
    assert (report.used, report.skips.count, table.rows["k"].calls) == (4, 2, 4)
