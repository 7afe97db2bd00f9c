"""A CSV row with a NUL byte is a damaged row on every Python and in every reader: left out and
counted, the rows after it read. (Python 3.10's csv module refuses a NUL, 3.11's reads it;
CI runs this on both.)"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.ncu_csv import TIME_METRIC, read_ncu_csv
from aorta.parsers.nsys_csv import read_kern_sum
from aorta.parsers.rocprof_csv import read_stats, read_trace
from aorta.parsers.skips import Skips

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def ncu(path: Path) -> tuple[int, Skips]:
    profile = read_ncu_csv(path, [TIME_METRIC])
    return len(profile.launches), profile.skips


def nsys(path: Path) -> tuple[int, Skips]:
    summary = read_kern_sum(path)
    return len(summary.table), summary.skips


def rocprof(read_file: Callable[..., object]) -> Callable[[Path], tuple[int, Skips]]:
    def read(path: Path) -> tuple[int, Skips]:
        report = read_file(path, KernelTable())
        return report.used, report.skips       # type: ignore[attr-defined]
    return read


# (fixture, the text in its first data row that gets a NUL, the reader)
CASES = {
    "ncu raw": ("ncu/h200/mm_raw.csv", "distribution", ncu),
    "nsys": ("nsys/written/kern_gpukernsum.csv", "sm80_xmma", nsys),
    "rocprof stats": ("rocprof/jacobi-stats/jacobi_kernel_stats.csv", "JacobiIteration",
                      rocprof(read_stats)),
    "rocprof trace": ("rocprof/omp-trace-7x/out_kernel_trace.csv", "QMnorm", rocprof(read_trace)),
}


@pytest.mark.parametrize("case", CASES)
def test_a_row_with_a_nul_is_left_out_and_counted(tmp_path: Path, case: str) -> None:
    fixture, text, read = CASES[case]
    source = FIXTURES / fixture
    data = source.read_bytes()
    assert data.count(text.encode()) >= 1
    damaged = tmp_path / source.name
    damaged.write_bytes(data.replace(text.encode(), text[:3].encode() + b"\0" + text[3:].encode(),
                                     1))
    whole, whole_skips = read(source)
    got, skips = read(damaged)
    assert got == whole - 1
    assert skips.count == whole_skips.count + 1
    assert any("NUL" in why for why in skips.examples), skips.examples
