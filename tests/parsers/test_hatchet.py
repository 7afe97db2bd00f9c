"""The `.hatchet` reader against real Proton captures and files written from the format."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aorta.parsers.hatchet import HatchetSummary, leaf_count, leaf_time_ns, read_json_file

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "proton"
H200 = FIXTURES / "h200"
WRITTEN = FIXTURES / "written"


def summary_of(*paths: Path) -> HatchetSummary:
    summary = HatchetSummary()
    for path in paths:
        summary.add_file(path)
    return summary


def row(summary: HatchetSummary, name: str) -> tuple[int | None, float]:
    kernel = summary.kernels.rows[name]
    return kernel.calls, kernel.total_ns


# --- real captures ---------------------------------------------------------------------------

def test_cli_tree_matches_the_capture_readme() -> None:
    summary = summary_of(H200 / "cli-tree" / "proton.hatchet")
    metrics = summary.kernels.metrics("proton")
    assert metrics["proton_kernel_count"] == 28
    assert summary.kernels.total_ns() == 70717
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.070717, rel=1e-12)
    # 14 leaves, 13 kernel names: add_kernel's two leaves (top level, under `step`) merge.
    assert len(summary.kernels) == 13
    assert row(summary, "add_kernel") == (11, 2912 + 22718)
    assert metrics["proton_top_kernels"][0] == "add_kernel"
    assert metrics["proton_top_kernel_ms"] == pytest.approx(0.02563, rel=1e-12)
    assert summary.scope_cycles == {} and summary.skips.count == 0


def test_python_context_ignores_the_scope_leaf_without_metrics() -> None:
    summary = summary_of(H200 / "cli-python" / "proton.hatchet")
    assert summary.kernels.metrics("proton")["proton_kernel_count"] == 28
    assert summary.kernels.total_ns() == 71359
    assert row(summary, "add_kernel") == (11, 3040 + 22880)
    assert "/usr/local/lib/python3.12/site-packages/triton/profiler/scope.py:46@_enter_scope" \
        not in summary.kernels.rows
    assert summary.skips.count == 0


def test_the_160_byte_root_only_tree_has_no_frame() -> None:
    path = H200 / "empty" / "proton.hatchet"
    assert path.stat().st_size == 160
    summary = summary_of(path)
    assert (summary.files, summary.frames, len(summary.kernels)) == (1, 0, 0)


def test_instrumentation_leaves_give_cycles_per_scope_and_no_kernel() -> None:
    summary = summary_of(H200 / "instrumentation" / "proton.hatchet")
    assert summary.scope_cycles == {"cheap": 606211, "expensive": 13626005}
    assert len(summary.kernels) == 0 and summary.skips.count == 0


# --- written from the format -----------------------------------------------------------------

def test_nested_scopes_and_every_unit() -> None:
    summary = summary_of(WRITTEN / "nested" / "proton.hatchet")
    calls, total = row(summary, "matmul_kernel")
    assert calls == 12 and total == pytest.approx(12.5e3 + 0.05e6, rel=1e-12)
    calls, total = row(summary, "softmax_kernel")
    assert calls == 6 and total == pytest.approx(3000 + 2000, rel=1e-12)
    assert list(summary.kernels.rows) == ["matmul_kernel", "softmax_kernel"]   # document order
    assert "empty_scope" not in summary.kernels.rows
    assert summary.frames == 10


def test_files_of_one_capture_add_up() -> None:
    summary = summary_of(WRITTEN / "multi" / "proton.hatchet",
                         WRITTEN / "multi" / "rank1" / "proton.hatchet")
    assert summary.files == 2
    assert row(summary, "add_kernel") == (10, 22000)
    assert row(summary, "copy_kernel") == (1, 500)


def test_amd_capture() -> None:
    metrics = summary_of(WRITTEN / "amd" / "proton.hatchet").kernels.metrics("proton")
    assert metrics["proton_kernel_count"] == 60
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.398, rel=1e-12)
    assert metrics["proton_top_kernels"][0] == "bias_gelu_kernel"


def test_inclusive_and_cpu_time_columns_are_ignored() -> None:
    summary = summary_of(WRITTEN / "inclusive" / "proton.hatchet")
    assert row(summary, "add_kernel") == (2, 1000)
    assert row(summary, "mul_kernel") == (1, 3000)
    assert "host_work" not in summary.kernels.rows          # cpu_time only: not a kernel
    assert summary.skips.count == 0


def test_nan_time_is_unusable_unless_another_time_column_is_good() -> None:
    summary = summary_of(WRITTEN / "nan" / "proton.hatchet")
    assert summary.skips.count == 1
    assert summary.skips.examples == ["'bad_kernel': time (ns) is not finite (nan)"]
    assert row(summary, "fallback_kernel") == (1, 2000)
    assert "bad_kernel" not in summary.kernels.rows


def test_overflowing_values_are_unusable() -> None:
    summary = summary_of(WRITTEN / "overflow" / "proton.hatchet")
    assert summary.skips.count == 3
    assert summary.skips.examples == [
        "'inf_kernel': time (ns) is not finite (inf)",
        "'huge_kernel': time (ns) is too large for a float",
        "'seconds_kernel': time (s) overflows once converted to ns",
    ]
    assert len(summary.kernels) == 0


def test_a_sum_past_the_float_range_publishes_nothing() -> None:
    summary = summary_of(WRITTEN / "overflow-sum" / "proton.hatchet")
    assert summary.skips.count == 0 and len(summary.kernels) == 2
    assert summary.kernels.metrics("proton") == {}


def test_untrusted_counts_drop_the_launch_count_but_keep_the_time() -> None:
    summary = summary_of(WRITTEN / "bad-counts" / "proton.hatchet")
    metrics = summary.kernels.metrics("proton")
    assert "proton_kernel_count" not in metrics
    assert summary.kernels.total_ns() == 1500
    calls = {r["name"]: r["calls"] for r in metrics["proton_kernels"]}
    assert calls == {"k_negative": None, "k_fraction": None, "k_string": None,
                     "k_missing": None, "k_float_whole": 10}


def test_bare_root_dict_is_accepted() -> None:
    assert row(summary_of(WRITTEN / "bare-root" / "proton.hatchet"), "add_kernel") == (3, 900)


def test_truncated_file_is_not_json() -> None:
    with pytest.raises(ValueError, match=r"proton.hatchet: not JSON"):
        summary_of(WRITTEN / "truncated" / "proton.hatchet")


# --- single rules ----------------------------------------------------------------------------

@pytest.mark.parametrize(("metrics", "expected"), [
    ({"time (ns)": 5}, 5.0),
    ({"time (us)": 5}, 5e3),
    ({"time (ms)": 5}, 5e6),
    ({"time (s)": 5}, 5e9),
    ({"Time (US)": 2}, 2e3),
    ({" time ( ns ) ": 7}, 7.0),
    ({"time (ns) (inc)": 9, "cpu_time (ns)": 8}, None),
    ({"time (min)": 1}, None),
    ({"times (ns)": 1}, None),
    ({}, None),
])
def test_time_column(metrics: dict[str, object], expected: float | None) -> None:
    assert leaf_time_ns(metrics) == expected


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -1, True, "12", None, [1]])
def test_bad_time_values(value: object) -> None:
    assert not isinstance(leaf_time_ns({"time (ns)": value}), (float, type(None)))


@pytest.mark.parametrize(("count", "expected"), [
    (3, 3), (3.0, 3), (0, 0), (2.5, None), (-1, None), ("3", None), (True, None),
    (float("nan"), None), (None, None),
])
def test_launch_count(count: object, expected: int | None) -> None:
    assert leaf_count({"count": count}) == expected


def test_a_leaf_with_launches_but_no_time_is_unusable() -> None:
    summary = HatchetSummary()
    summary.add_document([{"frame": {"name": "ROOT"}, "children": [
        {"frame": {"name": "k"}, "metrics": {"count": 4, "time (ns) (inc)": 10}}]}])
    assert summary.skips.count == 1 and "no time column" in summary.skips.examples[0]


def test_zero_time_zero_count_leaf_is_not_a_launch() -> None:
    summary = HatchetSummary()
    summary.add_document([{"frame": {"name": "ROOT"}, "children": [
        {"frame": {"name": "scope"}, "metrics": {"count": 0, "time (ns)": 0}}]}])
    assert len(summary.kernels) == 0


def test_malformed_nodes_are_skipped() -> None:
    summary = HatchetSummary()
    summary.add_document([{"frame": {"name": "ROOT"}, "children": [
        "not a node", 7,
        {"frame": {"name": ""}, "metrics": {"count": 1, "time (ns)": 1}},
        {"frame": "add", "metrics": {"count": 1, "time (ns)": 1}},
        {"frame": {"name": "no_metrics"}},
        {"frame": {"name": "children_not_a_list"}, "children": {"x": 1},
         "metrics": {"count": 2, "time (ns)": 20}},
    ]}, {"CUDA": {}}])
    assert list(summary.kernels.rows) == ["children_not_a_list"]


@pytest.mark.parametrize("doc", [[], {}, 3, "x", [{"CUDA": {}}], [[]]])
def test_documents_without_a_tree(doc: object) -> None:
    with pytest.raises(ValueError, match="no hatchet tree"):
        HatchetSummary().add_document(doc, "f.hatchet")


def test_a_deep_tree_is_walked_without_recursion() -> None:
    node: dict[str, object] = {"frame": {"name": "deep_kernel"}, "metrics": {"count": 1, "time (ns)": 5}}
    for depth in range(5000):
        node = {"frame": {"name": f"scope{depth}"}, "metrics": {}, "children": [node]}
    summary = HatchetSummary()
    summary.add_document([{"frame": {"name": "ROOT"}, "children": [node]}])
    assert row(summary, "deep_kernel") == (1, 5)


def test_nesting_past_the_json_readers_limit_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "deep.hatchet"
    path.write_text("[" * 200_000 + "]" * 200_000)
    with pytest.raises(ValueError, match="nested too deeply"):
        read_json_file(path)


def test_symlinks_and_special_files_are_not_opened(tmp_path: Path) -> None:
    real = tmp_path / "real.hatchet"
    real.write_text(json.dumps([{"frame": {"name": "ROOT"}, "children": []}]))
    link = tmp_path / "link.hatchet"
    link.symlink_to(real)
    with pytest.raises(ValueError, match="link.hatchet: cannot open"):
        read_json_file(link)
    fifo = tmp_path / "fifo.hatchet"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="fifo.hatchet: not a regular file"):
        read_json_file(fifo)
    with pytest.raises(ValueError, match="cannot open"):
        read_json_file(tmp_path / "absent.hatchet")


def test_launch_metadata_subtrees_are_dropped_and_counted() -> None:
    summary = summary_of(WRITTEN / "launch-metadata" / "proton.hatchet")
    assert row(summary, "triton_kernel") == (1, 1664)
    assert "cuda_kernel" not in summary.kernels.rows
    assert (summary.kernels.total_ns(), summary.metadata_frames) == (1664, 1)


def test_a_scope_whose_children_were_all_metadata_is_no_leaf() -> None:
    # The viewer drops such a scope; were it read as a leaf, its own metrics would count.
    doc = [{"frame": {"name": "ROOT"}, "metrics": {}, "children": [
        {"frame": {"name": "step"}, "metrics": {"count": 4, "time (ns)": 800}, "children": [
            {"frame": {"name": "__proton_launch_metadata"}, "metrics": {}, "children": []}]}]}]
    summary = HatchetSummary()
    summary.add_document(doc)
    assert (len(summary.kernels), summary.metadata_frames, summary.skips.count) == (0, 1, 0)


@pytest.mark.parametrize("key", ["count", "Count"])
def test_both_spellings_of_the_count(key: str) -> None:
    summary = HatchetSummary()
    summary.add_document({"frame": {"name": "ROOT"}, "children": [
        {"frame": {"name": "k"}, "metrics": {key: 7, "Time (ns)": 5}, "children": []}]})
    assert (row(summary, "k"), summary.skips.count) == ((7, 5.0), 0)
