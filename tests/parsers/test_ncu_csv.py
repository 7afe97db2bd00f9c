"""Nsight Compute CSV exports: the real H200 files, then hand-written edge cases."""

from __future__ import annotations

import math
import shutil
from pathlib import Path

import pytest

from aorta.parsers.ncu_csv import TIME_METRIC, NcuProfile, read_ncu_csv
from aorta.parsers.nv_numbers import parse_number, to_base

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ncu"
H200 = FIXTURES / "h200"
WRITTEN = FIXTURES / "written"
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"
DRAM = "dram__bytes.sum"
CLOCK = "sm__cycles_elapsed.avg.per_second"
MM_METRICS = [TIME_METRIC, SM, DRAM]
# gpu__time_duration.sum of the 7 launches in mm_raw.csv, in ns
MM_TIMES = [6080, 6048, 62016, 62144, 62144, 7424, 7584]


def test_raw_export_has_seven_launches_summing_to_213_44_us():
    profile = read_ncu_csv(H200 / "mm_raw.csv", MM_METRICS, "raw")
    assert [launch.id for launch in profile.launches] == list(range(7))
    assert [launch.values[TIME_METRIC] for launch in profile.launches] == MM_TIMES
    assert profile.units == {TIME_METRIC: "ns", SM: "%", DRAM: "byte"}
    assert (profile.missing, profile.skips.count, _untimed(profile)) == ([], 0, 0)
    table = profile.kernel_table()
    assert table.total_ns() == pytest.approx(213_440)
    assert table.metrics("ncu")["ncu_kernel_count"] == 7
    gemm = table.ranked()[0]
    assert gemm.name.startswith("sm80_xmma_gemm_f32f32") and gemm.calls == 3
    assert gemm.total_ns == pytest.approx(186_304)


def test_raw_kernel_names_keep_their_commas():
    profile = read_ncu_csv(H200 / "mm_raw.csv", MM_METRICS, "raw")
    first = profile.launches[0].kernel
    assert first.startswith(
        "void at::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4,")
    assert first.endswith("(long, at::PhiloxCudaState, T3, T4)")


def test_scaled_and_base_unit_exports_agree():
    scaled = read_ncu_csv(H200 / "mm_raw.csv", MM_METRICS, "raw")
    base = read_ncu_csv(H200 / "mm_raw_base.csv", MM_METRICS, "raw")
    for a, b in zip(scaled.launches, base.launches, strict=True):
        assert a.values[TIME_METRIC] == b.values[TIME_METRIC]
        assert a.values[DRAM] == b.values[DRAM]          # Mbyte 0.010240 == byte "10,240"
        assert a.values[SM] == pytest.approx(b.values[SM], abs=0.005)
    assert base.launches[2].values[DRAM] == 8_458_496


def test_details_page_reads_the_same_launches():
    details = read_ncu_csv(H200 / "mm_details.csv", MM_METRICS, "details")
    raw = read_ncu_csv(H200 / "mm_raw.csv", MM_METRICS, "raw")
    assert [d.kernel for d in details.launches] == [r.kernel for r in raw.launches]
    for d, r in zip(details.launches, raw.launches, strict=True):
        # the details page rounds to 2 decimals of the scaled unit
        assert d.values[TIME_METRIC] == pytest.approx(r.values[TIME_METRIC], abs=5)
        assert d.values[DRAM] == pytest.approx(r.values[DRAM], rel=5e-3)
    assert details.kernel_table().total_ns() == pytest.approx(213_430)
    assert details.units == {DRAM: "byte", TIME_METRIC: "ns", SM: "%"}


def test_reader_is_picked_from_the_header():
    assert read_ncu_csv(H200 / "mm_details.csv", MM_METRICS).kernel_table().total_ns() == \
        pytest.approx(213_430)
    assert read_ncu_csv(H200 / "mm_raw_base.csv", MM_METRICS).kernel_table().total_ns() == \
        pytest.approx(213_440)
    with pytest.raises(ValueError, match="not a details-page export"):
        read_ncu_csv(H200 / "mm_raw.csv", MM_METRICS, "details")


def test_metrics_not_in_the_export_are_listed_missing():
    profile = read_ncu_csv(H200 / "mm_raw.csv", [TIME_METRIC, "lts__t_bytes.sum"], "raw")
    assert profile.missing == ["lts__t_bytes.sum"]
    assert "lts__t_bytes.sum" not in profile.launches[0].values


def test_the_profiled_runs_own_output_is_not_a_table():
    with pytest.raises(ValueError, match="no ncu CSV header"):
        read_ncu_csv(H200 / "run.stdout", MM_METRICS)


def test_tool_lines_units_and_quoted_names():
    profile = read_ncu_csv(WRITTEN / "raw_noise_units.csv", [TIME_METRIC, DRAM, CLOCK])
    first, second = profile.launches
    assert first.kernel == 'void scale<float, 2>(float *, "tile, 4")'
    assert first.values == {TIME_METRIC: 1_250_000, DRAM: 1.0245e12, CLOCK: 1.98e9}
    assert second.values == {TIME_METRIC: 750, DRAM: 2.048e6, CLOCK: 1.755e9}
    assert profile.units == {TIME_METRIC: "ns", DRAM: "byte", CLOCK: "cycle/second"}


def test_tool_lines_before_a_real_export_are_skipped(tmp_path: Path):
    noisy = tmp_path / "noisy.csv"
    noisy.write_text((H200 / "run.stdout").read_text() + (H200 / "mm_raw.csv").read_text())
    assert read_ncu_csv(noisy, MM_METRICS).kernel_table().total_ns() == pytest.approx(213_440)


def test_no_units_row_is_refused():
    with pytest.raises(ValueError, match="no units row"):
        read_ncu_csv(WRITTEN / "raw_no_units.csv", [TIME_METRIC])


def test_header_only_has_no_launch():
    profile = read_ncu_csv(WRITTEN / "raw_header_only.csv", [TIME_METRIC])
    assert profile.launches == [] and profile.skips.count == 0


def test_nan_and_overflow_values_are_unreadable_not_numbers():
    profile = read_ncu_csv(WRITTEN / "raw_nan.csv", [TIME_METRIC, DRAM])
    assert [launch.values[TIME_METRIC] for launch in profile.launches] == [1000, None, None]
    assert [launch.values[DRAM] for launch in profile.launches] == [1e9, None, None]
    assert _untimed(profile) == 2
    assert profile.kernel_table().total_ns() == 1000


@pytest.mark.parametrize("name", ["raw_truncated.csv", "raw_truncated_quote.csv"])
def test_cut_rows_are_counted_bad(name: str):
    profile = read_ncu_csv(WRITTEN / name, [TIME_METRIC])
    assert [launch.values[TIME_METRIC] for launch in profile.launches] == [1000, 2000]
    assert profile.skips.count == 1


def test_export_cut_in_half_keeps_its_complete_rows(tmp_path: Path):
    text = (H200 / "mm_raw.csv").read_text()
    cut = tmp_path / "cut.csv"
    cut.write_text(text[: len(text) * 2 // 3])
    profile = read_ncu_csv(cut, [TIME_METRIC])
    assert profile.skips.count == 1
    assert len(profile.launches) < 7
    assert all(launch.values[TIME_METRIC] in MM_TIMES for launch in profile.launches)


def test_missing_time_column():
    profile = read_ncu_csv(WRITTEN / "raw_no_time.csv", [TIME_METRIC, DRAM])
    assert profile.missing == [TIME_METRIC]
    assert _untimed(profile) == 1 and len(profile.kernel_table()) == 0


def test_details_launch_without_a_metric_gets_none():
    profile = read_ncu_csv(WRITTEN / "details_gap.csv", [TIME_METRIC, DRAM, CLOCK])
    assert [(launch.id, launch.kernel) for launch in profile.launches] == \
        [(0, "add_kernel"), (1, "mul_kernel")]
    assert profile.launches[0].values == {DRAM: 8190, TIME_METRIC: 2500}
    assert profile.launches[1].values == {TIME_METRIC: 1500, DRAM: None}
    assert profile.missing == [CLOCK]


def test_empty_and_binary_files(tmp_path: Path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError):
        read_ncu_csv(empty, [TIME_METRIC])
    binary = tmp_path / "binary.csv"
    shutil.copy(H200 / "mm_raw.csv", binary)
    binary.write_bytes(b"\x00\xff" * 64 + binary.read_bytes())
    with pytest.raises(ValueError, match="no ncu CSV header"):   # a NUL byte ends the table
        read_ncu_csv(binary, [TIME_METRIC])


@pytest.mark.parametrize(("text", "value"), [
    ("1,024", 1024.0), ("6.080000", 6.08), ("1,980,000", 1_980_000.0), ("12,345.5", 12345.5),
    ("-3.5", -3.5), ("1e3", 1000.0), (" 7 ", 7.0),
    ("", None), ("n/a", None), ("nan", None), ("inf", None), ("1e999", None), ("1,02", None),
    ("(256, 1, 1)", None), ("240; 240", None), ("1.2.3", None),
])
def test_parse_number(text: str, value: float | None):
    assert parse_number(text) == value


@pytest.mark.parametrize(("value", "unit", "expected"), [
    (6.08, "us", (6080.0, "ns")), (6.08, "usecond", (6080.0, "ns")),
    (2.5, "msecond", (2.5e6, "ns")), (1, "second", (1e9, "ns")), (7, "nsecond", (7, "ns")),
    (0.01024, "Mbyte", (10240.0, "byte")), (8.19, "Kbyte", (8190.0, "byte")),
    (3, "Gbyte/second", (3e9, "byte/second")), (1.5, "cycle/nsecond", (1.5e9, "cycle/second")),
    (2, "inst/cycle", (2, "inst/cycle")), (49.2, "%", (49.2, "%")), (5, "", (5, "")),
    (7, "Kfoo", (7, "Kfoo")), (3, "register", (3, "register")),
])
def test_to_base(value: float, unit: str, expected: tuple[float, str]):
    scaled, base = to_base(value, unit)
    assert base == expected[1]
    assert math.isclose(scaled, expected[0])


def _untimed(profile: NcuProfile) -> int:
    return sum(1 for launch in profile.launches if launch.values.get(TIME_METRIC) is None)
