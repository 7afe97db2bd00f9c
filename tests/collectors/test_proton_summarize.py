"""`ProtonCollector.summarize`: metrics and capture states from real and written artifacts."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.base import TrialOutcome
from aorta.store.record_checks import CAPTURE_STATES
from aorta.collectors.proton.collector import ProtonCollector

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "proton"
PROTON = ProtonCollector()
PASSED = TrialOutcome(exit_code=0, signal=None, timed_out=False, launched=True)


def capture(tmp_path: Path, *sources: str) -> Path:
    """A fresh collector dir holding copies of fixture dirs (relative to the fixture root)."""
    out = tmp_path / "proton"
    out.mkdir()
    for source in sources:
        shutil.copytree(FIXTURES / source, out, dirs_exist_ok=True)
    return out


def summarize(out: Path, raw: dict[str, Any] | None = None,
              outcome: TrialOutcome = PASSED) -> dict[str, Any]:
    metrics = PROTON.summarize(out, PROTON.validate(raw), outcome)
    assert metrics["proton_capture"] in CAPTURE_STATES
    assert metrics["proton_artifact_dir"] == str(out)
    assert ("proton_capture_reason" in metrics) == (metrics["proton_capture"] != "ok")
    return metrics


def test_real_cli_tree(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "h200/cli-tree"))
    assert metrics["proton_capture"] == "ok"
    assert metrics["proton_kernel_count"] == 28
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.070717, rel=1e-12)
    assert metrics["proton_top_kernel_ms"] == pytest.approx(0.02563, rel=1e-12)
    assert metrics["proton_top_kernels"][0] == "add_kernel"
    assert len(metrics["proton_top_kernels"]) == 5
    assert len(metrics["proton_kernels"]) == 13
    assert metrics["proton_kernels"][0] == {"name": "add_kernel", "calls": 11,
                                            "total_ms": pytest.approx(0.02563, rel=1e-12)}


def test_real_python_context(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "h200/cli-python"), {"context": "python"})
    assert (metrics["proton_capture"], metrics["proton_kernel_count"]) == ("ok", 28)
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.071359, rel=1e-12)


def test_real_root_only_tree_is_empty(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "h200/empty"))
    assert metrics["proton_capture"] == "empty"
    assert metrics["proton_capture_reason"].startswith("the tree holds only ROOT")
    assert "proton_gpu_time_ms" not in metrics and "proton_kernel_count" not in metrics


def test_launch_metadata_frames_are_left_out_as_proton_viewer_does(tmp_path: Path) -> None:
    # Triton's test_viewer.py::test_filter_metadata tree: the viewer shows 1664 ns, 1 launch.
    metrics = summarize(capture(tmp_path, "written/launch-metadata"))
    assert metrics["proton_capture"] == "ok"
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.001664, rel=1e-12)
    assert metrics["proton_kernel_count"] == 1
    assert [k["name"] for k in metrics["proton_kernels"]] == ["triton_kernel"]


def test_a_tree_of_only_launch_metadata_is_empty_not_ok(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "written/metadata-only"))
    assert metrics["proton_capture"] == "empty"
    assert metrics["proton_capture_reason"].startswith(
        "only Proton's own __proton_launch_metadata frames (2, left out")
    assert "proton_gpu_time_ms" not in metrics and "proton_kernel_count" not in metrics


def test_older_proton_spellings_read_as_the_current_ones(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "written/old-spelling"))   # Count, Time (ns)
    assert metrics["proton_capture"] == "ok"
    assert metrics["proton_kernel_count"] == 11
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.023918, rel=1e-12)


def test_trace_events_under_launch_metadata_are_left_out(tmp_path: Path) -> None:
    out = capture(tmp_path, "written/trace-metadata")
    metrics = summarize(out, {"data": "trace"})
    assert (metrics["proton_capture"], metrics["proton_kernel_count"]) == ("ok", 2)
    assert metrics["proton_top_kernels"] == ["add_kernel", "no_stack_kernel"]
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.004, rel=1e-12)
    events = [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": 1,
               "args": {"call_stack": ["ROOT", "__proton_launch_metadata", "k"]}}]
    (out / "proton.chrome_trace").write_text(json.dumps({"traceEvents": events}))
    metrics = summarize(out, {"data": "trace"})
    assert metrics["proton_capture"] == "empty"
    assert metrics["proton_capture_reason"].startswith("only kernel events under __proton_launch")


def test_real_instrumentation_publishes_cycles_per_scope(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "h200/instrumentation"),
                        {"mode": "env", "backend": "instrumentation"})
    assert metrics == {"proton_artifact_dir": metrics["proton_artifact_dir"],
                       "proton_scope_cycles": {"cheap": 606211, "expensive": 13626005},
                       "proton_capture": "ok"}


def test_instrumentation_tree_with_timed_kernels_and_no_scope(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "written/inclusive"), {"backend": "instrumentation"})
    assert metrics["proton_capture"] == "ok" and metrics["proton_kernel_count"] == 3
    assert "proton_scope_cycles" not in metrics


def test_instrumentation_root_only_is_empty(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "h200/empty"), {"backend": "instrumentation"})
    assert metrics["proton_capture"] == "empty"


def test_real_trace(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "h200/trace"), {"data": "trace"})
    assert metrics["proton_capture"] == "ok"
    assert metrics["proton_kernel_count"] == 10
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.023104, rel=1e-9)
    assert metrics["proton_top_kernels"] == ["add_kernel"]


def test_trace_counts_only_kernel_events(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "written/trace-mixed"), {"data": "trace"})
    assert metrics["proton_kernel_count"] == 3
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.00725, rel=1e-12)


@pytest.mark.parametrize(("source", "state", "reason"), [
    ("written/trace-empty", "empty", "no kernel event"),
    ("written/trace-truncated", "partial", "cut short"),
])
def test_trace_states(tmp_path: Path, source: str, state: str, reason: str) -> None:
    metrics = summarize(capture(tmp_path, source), {"data": "trace"})
    assert metrics["proton_capture"] == state and reason in metrics["proton_capture_reason"]


def test_a_capture_in_several_files_adds_up(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "written/multi"))
    assert metrics["proton_kernel_count"] == 11
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.0225, rel=1e-12)


def test_untrusted_counts_omit_the_count_only(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "written/bad-counts"))
    assert metrics["proton_capture"] == "partial" and metrics["proton_skipped"] == 4
    assert "proton_kernel_count" not in metrics
    assert metrics["proton_gpu_time_ms"] == pytest.approx(0.0015, rel=1e-12)


@pytest.mark.parametrize(("source", "skipped", "reason"), [
    ("written/nan", 1, "1 frame left out ('bad_kernel': time (ns) is not finite"),
])
def test_frames_left_out_make_the_capture_partial(tmp_path: Path, source: str, skipped: int,
                                                  reason: str) -> None:
    """Issue 12.1: the frames read are published, marked partial, never ok."""
    metrics = summarize(capture(tmp_path, source))
    assert metrics["proton_capture"] == "partial" and metrics["proton_skipped"] == skipped
    assert reason in metrics["proton_capture_reason"]
    assert "proton_kernel_count" not in metrics


@pytest.mark.parametrize(("source", "reason"), [
    ("written/overflow", "3 frames left out ("),
    ("written/overflow-sum", "sum past the float range"),
    ("written/truncated", "proton.hatchet: not JSON"),
])
def test_untrustworthy_captures_publish_no_numbers(tmp_path: Path, source: str,
                                                   reason: str) -> None:
    metrics = summarize(capture(tmp_path, source))
    assert metrics["proton_capture"] == "unparsed"
    assert reason in metrics["proton_capture_reason"]
    assert not any(k in metrics for k in ("proton_gpu_time_ms", "proton_kernel_count",
                                          "proton_kernels"))


def test_one_broken_file_withholds_the_whole_capture(tmp_path: Path) -> None:
    out = capture(tmp_path, "written/multi")
    (out / "rank2").mkdir()
    shutil.copy(FIXTURES / "written" / "truncated" / "proton.hatchet", out / "rank2")
    metrics = summarize(out)
    assert metrics["proton_capture"] == "unparsed"
    assert "with 3 file(s), totals are withheld" in metrics["proton_capture_reason"]


# --- the artifact dir itself -----------------------------------------------------------------

def test_symlinked_artifact_dir_is_not_followed(tmp_path: Path) -> None:
    real = capture(tmp_path, "h200/cli-tree")
    link = tmp_path / "link"
    link.symlink_to(real)
    metrics = summarize(link)
    assert metrics["proton_capture"] == "unparsed" and "is a symbolic link" in metrics["proton_capture_reason"]


def test_symlinked_artifact_is_not_read(tmp_path: Path) -> None:
    out = tmp_path / "proton"
    out.mkdir()
    (out / "proton.hatchet").symlink_to(FIXTURES / "h200" / "cli-tree" / "proton.hatchet")
    metrics = summarize(out)
    assert metrics["proton_capture"] == "unparsed"
    assert "proton.hatchet is not a regular file" in metrics["proton_capture_reason"]


def test_a_fifo_named_like_an_artifact_is_not_opened(tmp_path: Path) -> None:
    out = tmp_path / "proton"
    out.mkdir()
    os.mkfifo(out / "proton.hatchet")
    assert summarize(out)["proton_capture"] == "unparsed"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads directories whatever their mode")
def test_unreadable_artifact_dir(tmp_path: Path) -> None:
    out = capture(tmp_path, "h200/cli-tree")
    out.chmod(0)
    try:
        metrics = summarize(out)
    finally:
        out.chmod(0o755)
    assert metrics["proton_capture"] == "unparsed"


def test_artifact_dir_that_is_a_file(tmp_path: Path) -> None:
    out = tmp_path / "proton"
    out.write_text("x")
    metrics = summarize(out)
    assert metrics["proton_capture"] == "unparsed"
    assert metrics["proton_capture_reason"].endswith("is not a directory")


def test_absent_artifact_dir_is_missing(tmp_path: Path) -> None:
    assert summarize(tmp_path / "proton")["proton_capture"] == "missing"


def test_msgpack_only_names_the_format(tmp_path: Path) -> None:
    out = tmp_path / "proton"
    out.mkdir()
    (out / "proton.hatchet_msgpack").write_bytes(b"\x91\x80")
    metrics = summarize(out)
    assert metrics["proton_capture"] == "missing"
    assert "proton.hatchet_msgpack but no .hatchet" in metrics["proton_capture_reason"]
    assert "output_format='hatchet'" in metrics["proton_capture_reason"]


def test_a_tree_where_a_trace_was_asked_for(tmp_path: Path) -> None:
    metrics = summarize(capture(tmp_path, "h200/cli-tree"), {"mode": "env", "data": "trace"})
    assert metrics["proton_capture"] == "missing"
    assert metrics["proton_capture_reason"] == (
        "Proton wrote proton.hatchet but no .chrome_trace, which data: trace reads; a payload "
        "that starts Proton itself must pass data=os.environ['AORTA_PROTON_DATA']")


# --- missing: what summarize hands the reasons (the reasons: test_proton_reasons.py) ---

def outcome(code: int | None = 0, sig: int | None = None, timed_out: bool = False,
            launched: bool = True) -> TrialOutcome:
    return TrialOutcome(code, sig, timed_out, launched)


def test_no_files_in_a_launched_trial_is_missing(tmp_path: Path) -> None:
    out = tmp_path / "proton"
    out.mkdir()
    metrics = summarize(out, None, outcome(1))
    assert metrics["proton_capture"] == "missing"
    assert "exited 1" in metrics["proton_capture_reason"]
