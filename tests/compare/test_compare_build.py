"""Building a comparison from run directories: matching, NEW/GONE, notes, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest

from aorta.comparison.build import compare_runs
from aorta.comparison.load import RunRef, load_run
from aorta.comparison.model import CompareSettings, Row
from aorta.base.errors import UserError

from compare_helpers import kernels, make_run, timed_cell, trial

WALLS = [1.00, 1.02, 0.98, 1.01, 0.99, 1.00]


def kernel_trials(cell, walls, tables):
    return [trial(cell, i, wall=w, rocprof_gpu_time_ms=sum(t.values()),
                  rocprof_kernels=kernels(**t)) for i, (w, t) in enumerate(zip(walls, tables))]


def compare(tmp_path, base_cells, new_cells, settings=CompareSettings(), base_ref=None,
            new_ref=None):
    base = make_run(tmp_path, "base", base_cells)
    new = make_run(tmp_path, "new", new_cells)
    return compare_runs(load_run(RunRef(base, base_ref)), load_run(RunRef(new, new_ref)),
                        settings)


def row(comparison, name) -> Row:
    (found,) = [r for r in comparison.rows() if r.name == name]
    return found


def test_a_run_against_itself_is_never_different(tmp_path: Path):
    # nvbench's lesson: identical code must not come out FASTER or SLOWER.
    tables = [{"gemm": 2.0 * w, "softmax": 0.5 * w} for w in WALLS]
    cells = {"c": kernel_trials("c", WALLS, tables)}
    comparison = compare(tmp_path, cells, cells)
    verdicts = {r.name: r.verdict for r in comparison.rows()}
    assert set(verdicts.values()) <= {"SAME", "UNCERTAIN"}
    assert verdicts["wall_s"] == "SAME"


def test_rebuilt_kernel_names_still_match(tmp_path: Path):
    base_tables = [{"add_kernel_0d1d2de": 1.0, "triton_poi_fused_mul_0": 2.0}] * 6
    new_tables = [{"add_kernel_0d1d2d": 1.5, "triton_poi_fused_mul_7": 2.0}] * 6
    comparison = compare(tmp_path, {"c": kernel_trials("c", WALLS, base_tables)},
                         {"c": kernel_trials("c", WALLS, new_tables)})
    kernel_rows = comparison.cells[0].kernel_rows()
    assert [(r.name, r.verdict) for r in kernel_rows] == [
        ("add_kernel", "SLOWER"), ("triton_poi_fused_mul", "SAME")]
    assert kernel_rows[0].raw_names == ("add_kernel_0d1d2d", "add_kernel_0d1d2de")
    assert kernel_rows[0].table == "rocprof_kernels"


def test_new_and_gone_kernels_have_no_statistics(tmp_path: Path):
    comparison = compare(tmp_path, {"c": kernel_trials("c", WALLS, [{"old": 1.0, "k": 1.0}] * 6)},
                         {"c": kernel_trials("c", WALLS, [{"fresh": 3.0, "k": 1.0}] * 6)})
    gone, new = row(comparison, "old"), row(comparison, "fresh")
    assert gone.verdict == "GONE" and gone.base_median == 1.0 and gone.new_median is None
    assert new.verdict == "NEW" and new.new_median == 3.0 and new.p_value is None
    assert gone.change == -1.0 and new.change == 3.0
    # sorted by absolute change: fresh (+3), old (-1), k (0)
    assert [r.name for r in comparison.cells[0].kernel_rows()] == ["fresh", "old", "k"]


def test_kernel_missing_from_some_trials_counts_as_zero(tmp_path: Path):
    base = [{"k": 1.0, "rare": 0.2}] * 2 + [{"k": 1.0}] * 4
    new = [{"k": 1.0, "rare": 0.2}] * 6
    comparison = compare(tmp_path, {"c": kernel_trials("c", WALLS, base)},
                         {"c": kernel_trials("c", WALLS, new)})
    rare = row(comparison, "rare")
    assert rare.base_median == 0.0 and rare.verdict == "INCOMPARABLE"
    assert "ran in 2/6 base and 6/6 new trials" in rare.note


def test_templates_merge_only_when_asked(tmp_path: Path):
    base = [{"gemm<float, 128>(T)": 1.0}] * 6
    new = [{"gemm<float, 256>(T)": 1.0}] * 6
    cells = ({"c": kernel_trials("c", WALLS, base)}, {"c": kernel_trials("c", WALLS, new)})
    plain = compare(tmp_path / "a", *cells)
    assert {r.verdict for r in plain.cells[0].kernel_rows()} == {"NEW", "GONE"}
    merged = compare(tmp_path / "b", *cells, settings=CompareSettings(match_templates=True))
    assert [(r.name, r.verdict) for r in merged.cells[0].kernel_rows()] == [("gemm<>(T)", "SAME")]


def test_errored_trials_never_become_significant(tmp_path: Path):
    base = timed_cell("c", WALLS)
    # New: the same speed, plus three errored trials with absurd numbers that must not count.
    new = timed_cell("c", WALLS) + [trial("c", 6 + i, "error", wall=50.0) for i in range(3)]
    comparison = compare(tmp_path, {"c": base}, {"c": new})
    wall = row(comparison, "wall_s")
    assert wall.verdict == "SAME" and wall.new_n == 6
    assert any("only the 6 passing trial(s) of 9" in n for n in comparison.cells[0].notes)


def test_metric_filter_and_one_sided_notes(tmp_path: Path):
    base = timed_cell("c", WALLS, only_base_ms=[1.0] * 6, shared_ms=[1.0] * 6)
    new = timed_cell("c", WALLS, shared_ms=[1.0] * 6)
    comparison = compare(tmp_path, {"c": base, "x": timed_cell("x", WALLS)}, {"c": new})
    assert "metrics only in base: only_base_ms" in comparison.cells[0].notes
    assert comparison.notes == ("cells only in base (not compared): x",)
    filtered = compare(tmp_path / "f", {"c": base}, {"c": new},
                       CompareSettings(metrics=("shared_ms",), kernels=False))
    assert [r.name for r in filtered.rows()] == ["shared_ms"]
    with pytest.raises(UserError, match="--metric typo_ms: no compared cell"):
        compare(tmp_path / "t", {"c": base}, {"c": new}, CompareSettings(metrics=("typo_ms",)))


def test_nothing_to_compare(tmp_path: Path):
    failed = [trial("c", i, "fail") for i in range(3)]
    with pytest.raises(UserError, match="nothing to compare.*base 0, new 6 passed"):
        compare(tmp_path, {"c": failed}, {"c": timed_cell("c", WALLS)})


def test_two_cells_of_one_run(tmp_path: Path):
    run = make_run(tmp_path, "r", {"slow": timed_cell("slow", [w * 1.3 for w in WALLS]),
                                   "fast": timed_cell("fast", WALLS)})
    comparison = compare_runs(load_run(RunRef(run, "fast")), load_run(RunRef(run, "slow")),
                              CompareSettings())
    assert comparison.cells[0].label == "fast -> slow"
    assert row(comparison, "wall_s").verdict == "SLOWER"
    assert comparison.base.endswith(":fast")


def test_rows_are_reproducible_and_order_free(tmp_path: Path):
    # Issue 13: the interval is exact, so there is no seed; the same samples give the same
    # row whichever other rows are compared alongside, and every time.
    noisy = [1.0, 1.3, 0.8, 1.1, 0.95, 1.2]
    base = {"a": timed_cell("a", noisy), "b": timed_cell("b", noisy)}
    new = {"a": timed_cell("a", noisy[::-1]), "b": timed_cell("b", noisy[1:] + noisy[:1])}
    first = compare(tmp_path / "1", base, new)
    again = compare(tmp_path / "2", base, new)
    assert list(first.rows()) == list(again.rows())
    only_b = compare(tmp_path / "3", base, new, base_ref="b", new_ref="b")
    assert row(only_b, "wall_s") == [r for r in first.rows() if r.cell == "b"][0]


def many_kernels(tmp_path: Path, settings: CompareSettings):
    """40 kernels unchanged but noisy, one 50% slower, 6 trials a side."""
    walls = [1.00, 1.02, 0.98, 1.01, 0.99, 1.00]
    noise = [[1 + 0.03 * ((i * 7 + k * 3) % 5 - 2) for k in range(41)] for i in range(6)]
    tables = [{f"k{k}": noise[i][k] * (1.5 if k == 0 else 1.0) for k in range(41)}
              for i in range(6)]
    flat = [{f"k{k}": noise[(i + 2) % 6][k] for k in range(41)} for i in range(6)]
    return compare(tmp_path, {"c": kernel_trials("c", walls, flat)},
                   {"c": kernel_trials("c", walls, tables)}, settings)


def test_correction_adjusts_p_across_every_row(tmp_path: Path):
    plain = many_kernels(tmp_path / "none", CompareSettings())
    holm = many_kernels(tmp_path / "holm", CompareSettings(correction="holm"))
    bh = many_kernels(tmp_path / "bh", CompareSettings(correction="bh"))
    # The family: 41 kernels and the two metrics with a test (wall_s, rocprof_gpu_time_ms).
    assert plain.tested == holm.tested == 43
    for mine, theirs in zip(plain.rows(), holm.rows()):
        assert mine.p_value == theirs.p_value and mine.p_adjusted is None
        if theirs.p_value is not None:
            assert theirs.p_adjusted is not None and theirs.p_adjusted >= theirs.p_value
    assert all(b.p_adjusted <= h.p_adjusted for b, h in zip(bh.rows(), holm.rows())
               if h.p_adjusted is not None and b.p_adjusted is not None)
    # 6 vs 6 trials: the smallest p, 2/924, times 43 still clears 0.05 only without Holm.
    assert row(plain, "k0").verdict == "SLOWER"
    assert row(holm, "k0").verdict == "UNCERTAIN"
    assert row(holm, "k0").p_adjusted == pytest.approx(43 * 2 / 924)


def test_rows_inside_the_band_do_not_loosen_bh(tmp_path: Path):
    # 40 quiet kernels truly 2% slower (SAME at +/-5%, p = 1e-5 each) and 10 noisy ones, of
    # which one looks 30% slower at p = 0.0055. Counted among BH's discoveries, the 40 would
    # let that one through (q = 51 x 0.0055 / 41 = 0.0069); BH over the ten it could call
    # asks for p <= 0.005 of it (q = 10 x 0.0055 = 0.055).
    noisy = [1.0, 1.3, 0.75, 1.15, 0.9, 1.05, 0.95, 1.2, 0.8, 1.1]
    looks_slower = [v * 1.3 for v in noisy[3:] + noisy[:3]]

    def tables(new: bool):
        out = []
        for i in range(10):
            table = {f"quiet{k}": (1 + 0.001 * ((i + k) % 10)) * (1.02 if new else 1.0)
                     for k in range(40)}
            table["suspect"] = (looks_slower if new else noisy)[i]
            table.update({f"noisy{k}": noisy[(i + k + 3 * new) % 10] for k in range(9)})
            out.append(trial("c", i, wall=1.0, rocprof_kernels=kernels(**table)))
        return out

    found = compare(tmp_path, {"c": tables(False)}, {"c": tables(True)},
                    CompareSettings(correction="bh", metrics=("wall_s",)))
    assert row(found, "quiet0").verdict == "SAME" and row(found, "quiet0").p_adjusted is None
    suspect = row(found, "suspect")
    assert suspect.p_value == pytest.approx(0.00551, abs=1e-5) and suspect.ci_low > 1.05
    assert suspect.p_adjusted == pytest.approx(10 * suspect.p_value)
    assert suspect.verdict == "UNCERTAIN"


def test_row_records_check_themselves():
    with pytest.raises(ValueError, match="verdict must be one of"):
        Row("c", "metric", "x", "time", "WORSE", 1, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="reversed"):
        Row("c", "metric", "x", "time", "SAME", 1, 1, ci_low=2.0, ci_high=1.0)
    with pytest.raises(ValueError, match="only an UNCERTAIN"):
        Row("c", "metric", "x", "time", "SAME", 1, 1, more_trials=3)
    with pytest.raises(ValueError, match="must name its table"):
        Row("c", "kernel", "k", "time", "SAME", 1, 1)


def test_a_proton_run_against_a_torch_run_matches_kernels(tmp_path: Path):
    """Issue 12.3: Proton names a kernel `_ZN7cutlass...`, the PyTorch profiler
    `void cutlass::Kernel2<...>(...)`; each run has its own collector's table."""
    pytest.importorskip("cxxfilt")
    mangled = "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE"
    plain = ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>("
             "cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")

    def cells(table: str, name: str):
        return {"c": [trial("c", i, wall=w, **{table: [{"name": name, "calls": 3,
                                                        "total_ms": 2.0 * w}]})
                      for i, w in enumerate(WALLS)]}

    comparison = compare(tmp_path, cells("proton_kernels", mangled), cells("torch_kernels", plain))
    matched = [r for r in comparison.rows() if "cutlass::Kernel2" in r.name]
    assert len(matched) == 1 and matched[0].verdict == "SAME", matched   # one kernel, paired
    assert any("proton_kernels compared with torch_kernels" in n
               for c in comparison.cells for n in c.notes)
