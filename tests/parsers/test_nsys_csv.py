"""Nsight Systems kernel summaries: `nsys stats --report cuda_gpu_kern_sum` (or `gpukernsum`), CSV."""

from __future__ import annotations

from pathlib import Path

import pytest

from aorta.parsers.nsys_csv import read_kern_sum, read_kern_sum_lines

WRITTEN = Path(__file__).resolve().parents[1] / "fixtures" / "nsys" / "written"
GEMM = ("sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_"
        "aligna4_alignc4_execute_kernel__5x_cublas")
QUOTED = 'kernel_with_"quotes", and commas'


@pytest.mark.parametrize("name", ["kern_cuda_gpu_kern_sum.csv", "cuda_gpu_kern_sum_stdout.txt",
                                  "kern_gpukernsum.csv", "gpukernsum_stdout.txt"])
def test_both_report_names_with_and_without_preamble(name: str):
    summary = read_kern_sum(WRITTEN / name)
    assert (summary.rows, summary.skips.count, summary.no_kernels) == (4, 0, False)
    metrics = summary.table.metrics("nsys")
    assert metrics["nsys_gpu_time_ms"] == pytest.approx(0.213664)
    assert metrics["nsys_kernel_count"] == 8
    assert metrics["nsys_top_kernel_ms"] == pytest.approx(0.186304)
    assert metrics["nsys_top_kernels"][0] == GEMM
    assert metrics["nsys_top_kernels"][-1] == QUOTED
    rows = {r.name: r for r in summary.table.rows.values()}
    assert rows[GEMM].calls == 3 and rows[GEMM].max_ns == 62144
    assert any(name.startswith("void at::native::reduce_kernel<512, 1") for name in rows)


def test_skipped_report_says_no_kernels():
    summary = read_kern_sum(WRITTEN / "skipped_stdout.txt")
    assert summary.no_kernels and not summary.header_found and summary.rows == 0


def test_header_only_is_a_table_with_no_rows():
    summary = read_kern_sum(WRITTEN / "header_only.csv")
    assert summary.header_found and summary.rows == 0 and len(summary.table) == 0


@pytest.mark.parametrize("name", ["truncated.csv", "truncated_quote.csv", "nan_total.csv",
                                  "overflow_total.csv"])
def test_unreadable_rows_are_counted(name: str):
    summary = read_kern_sum(WRITTEN / name)
    assert summary.skips.count == 1
    assert list(summary.table.rows) == [GEMM]


@pytest.mark.parametrize(("name", "skipped"), [("bad_instances.csv", 1),
                                               ("no_instances.csv", 0)])
def test_untrusted_instances_keep_times_but_drop_the_count(name: str, skipped: int):
    """An unreadable Instances is damage (counted); a table without the column is not."""
    summary = read_kern_sum(WRITTEN / name)
    metrics = summary.table.metrics("nsys")
    assert summary.skips.count == skipped
    assert metrics["nsys_gpu_time_ms"] == pytest.approx(0.001)
    assert "nsys_kernel_count" not in metrics


def test_time_unit_comes_from_the_header():
    summary = read_kern_sum(WRITTEN / "usec.csv")
    metrics = summary.table.metrics("nsys")
    assert metrics["nsys_gpu_time_ms"] == pytest.approx(0.23288)
    assert metrics["nsys_kernel_count"] == 8
    assert summary.table.rows["gemm_kernel"].max_ns == pytest.approx(62144)
    assert "reduce, kernel" in summary.table.rows


def test_a_table_without_total_time_is_not_found():
    summary = read_kern_sum(WRITTEN / "no_total.csv")
    assert not summary.header_found and summary.rows == 0


def test_a_total_not_in_time_is_refused():
    with pytest.raises(ValueError, match="not a unit of time"):
        read_kern_sum(WRITTEN / "bytes_total.csv")


def test_report_title_line_and_blank_lines_before_the_table():
    lines = [
        "Processing [report.sqlite] with [/opt/nsys/host-linux-x64/reports/kern_sum.py]...",
        "",
        " ** CUDA GPU Kernel Summary (cuda_gpu_kern_sum):",
        "",
        "Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),Max (ns),StdDev (ns),Name",
        "100.0,1500,3,500.0,500.0,400,600,100.0,add_kernel",
        "",
    ]
    summary = read_kern_sum_lines(lines)
    assert summary.table.metrics("nsys")["nsys_kernel_count"] == 3
    assert summary.table.total_ns() == 1500


def test_same_name_twice_is_summed():
    lines = ["Time (%),Total Time (ns),Instances,Max (ns),Name",
             "50.0,100,1,100,k", "50.0,300,2,200,k"]
    summary = read_kern_sum_lines(lines)
    row = summary.table.rows["k"]
    assert (row.total_ns, row.calls, row.max_ns) == (400, 3, 200)


def test_empty_input():
    summary = read_kern_sum_lines([])
    assert (summary.header_found, summary.rows, summary.no_kernels) == (False, 0, False)
