"""build_report: a run directory's files in, plain data out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aorta.base.errors import RunDirError
from aorta.store.records import Capture
from aorta.report import build_report
from report_helpers import ENV, HOSTILE, kernels, trial


def test_real_h200_run_header_cells_and_failures(real_run: Path) -> None:
    report = build_report(real_run)
    h = report.header
    assert h.run == "gpu-report" and h.status == "complete"
    assert h.collectors == ["proton"] and h.trials_per_cell == 3
    assert [(g.name, g.driver, g.memory) for g in h.gpus] == \
        [("NVIDIA H200", "580.159.04", "140.4 GiB")]
    assert h.software["torch"] == "2.11.0" and h.software["triton"] == "3.6.0"
    assert h.software["CUDA"] == "13.0" and h.software["python"] == "3.12.3"
    assert [(c.name, c.passed, c.failed, c.errored, c.missing) for c in report.cells] == \
        [("c1024", 3, 0, 0, 0), ("c4096", 3, 0, 0, 0), ("bad", 0, 3, 0, 0)]
    c1024 = report.cells[0]
    assert c1024.metrics["proton_kernel_count"].median == 21
    assert [p.trial for p in c1024.metrics["wall_s"].points] == [0, 1, 2]
    chart = c1024.kernels[0]
    assert chart.table == "proton_kernels" and chart.bars[0].name == "softmax_kernel"
    assert chart.bars[0].calls == 21 and chart.trials == 3
    # the three identical failures fold into one, with the real argparse error as stderr
    [failure] = report.failures
    assert (failure.cell, failure.name, failure.repeats) == ("bad", "trial_0",
                                                             ["trial_1", "trial_2"])
    assert "--rows must be in 1..1048576" in (failure.stderr_tail or "")
    assert failure.captures["proton"].startswith("missing: Proton's CLI wrote no .hatchet")
    assert failure.files["proton/"] == "cells/bad/trial_0/proton/"
    # the engine's warning repeating the capture problem is not said twice
    assert not [n for n in report.warnings if n.kind == "trial"]


def test_statistics_agree_with_matrix_json(real_run: Path) -> None:
    report = build_report(real_run)
    matrix = json.loads((real_run / "matrix.json").read_text())
    for cell, stored in zip(report.cells, matrix["cells"]):
        assert set(cell.metrics) == set(stored["metrics"])
        for key, stats in stored["metrics"].items():
            assert cell.metrics[key].median == pytest.approx(stats["median"])
            assert cell.metrics[key].std == pytest.approx(stats["std"])
            assert len(cell.metrics[key].points) == stats["n"]


def test_interrupted_run_with_missing_trials_still_reports(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0), trial("a", 1), None],
                        "b": [None, None, None]}, status="interrupted", matrix=False)
    (run_dir / "cells" / "b" / "trial_0").mkdir(parents=True)      # started, never finished
    (run_dir / "cells" / "b" / "trial_0" / "stderr.log").write_text("partial\n")
    report = build_report(run_dir)
    a, b = report.cells
    assert (a.passed, a.missing, b.passed, b.missing) == (2, 1, 0, 3)
    assert [t.verdict for t in b.trials] == ["missing"] * 3
    assert b.trials[0].files == {"stderr.log": "cells/b/trial_0/stderr.log"}
    kinds = [(n.kind, n.cell) for n in report.warnings]
    assert ("run", None) in kinds and ("missing", "a") in kinds and ("missing", "b") in kinds
    run_notice = next(n for n in report.warnings if n.kind == "run" and "interrupted" in
                      n.message)
    assert "4 of 6 planned" in run_notice.message
    assert any("matrix.json is missing" in n.message for n in report.warnings)
    assert report.totals == {"planned": 6, "passed": 2, "failed": 0, "errored": 0, "missing": 4}


def test_unreadable_result_is_missing_and_said_so(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0), trial("a", 1)]})
    (run_dir / "cells" / "a" / "trial_1" / "result.json").write_text('{"cell": "a", "ind')
    report = build_report(run_dir)
    assert report.cells[0].missing == 1
    assert any(n.kind == "corrupt" and "trial_1/result.json is not a valid record" in n.message
               for n in report.warnings)
    assert report.cells[0].trials[1].verdict == "corrupt"


def test_failures_keep_their_stderr_and_control_codes_are_stripped(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0), trial("a", 1, "fail", stderr_tail=HOSTILE),
                              trial("a", 2, "error", reason="timed out after 5 s",
                                    exit_code=None, signal=15, timed_out=True,
                                    stderr_tail="")]})
    fail, error = build_report(run_dir).failures
    assert fail.stderr_tail is not None and "<script>" in fail.stderr_tail
    assert "\x1b" not in fail.stderr_tail and "red" in fail.stderr_tail
    assert (error.verdict, error.signal, error.timed_out, error.stderr_tail) == \
        ("error", 15, True, "")


def test_stderr_falls_back_to_the_log_tail(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0, "fail")]})
    log = run_dir / "cells" / "a" / "trial_0" / "stderr.log"
    log.write_text("x" * 10_000 + "\nthe last line\n")
    [failure] = build_report(run_dir).failures
    assert failure.stderr_tail is not None and failure.stderr_tail.endswith("the last line\n")
    assert len(failure.stderr_tail) <= 4096


def test_unreliable_cell_and_capture_problems_of_passing_trials(make_run) -> None:
    empty = {"nsys": Capture("empty", "no kernel ran")}
    run_dir = make_run({"a": [trial("a", 0, captures=empty), trial("a", 1, captures=empty),
                              trial("a", 2, "error", reason="collector setup failed",
                                    exit_code=None)]})
    report = build_report(run_dir)
    assert report.cells[0].unreliable
    messages = {(n.kind, n.message) for n in report.warnings}
    assert ("capture", "nsys capture empty: no kernel ran (trial_0, trial_1)") in messages
    assert any(kind == "unreliable" for kind, _ in messages)


def test_kernel_medians_count_absent_kernels_as_zero(make_run) -> None:
    tables = [kernels(("gemm", 10, 4.0), ("rare", 1, 9.0)), kernels(("gemm", 10, 6.0)),
              kernels(("gemm", 10, 5.0))]
    run_dir = make_run({"a": [trial("a", i, metrics={"nsys_kernels": t})
                              for i, t in enumerate(tables)]})
    [chart] = build_report(run_dir).cells[0].kernels
    assert [(b.name, b.median_ms, b.calls, b.trials) for b in chart.bars] == \
        [("gemm", 5.0, 10, 3), ("rare", 0.0, 0, 1)]
    assert chart.listed == 2 and chart.trials == 3


def test_untrusted_call_counts_stay_unknown(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0, metrics={"nsys_kernels": kernels(("k", None, 1.0))})]})
    assert build_report(run_dir).cells[0].kernels[0].bars[0].calls is None


def test_non_finite_and_non_numeric_metrics_are_left_out(make_run) -> None:
    metrics = {"nsys_gpu_time_ms": float("nan"), "nsys_capture": "ok", "flag": True,
               "nsys_kernel_count": 7, "nsys_kernels": [{"name": "k"}]}   # no total_ms: not a table
    report = build_report(make_run({"a": [trial("a", 0, metrics=metrics)]}))
    assert "nsys_gpu_time_ms" not in report.metrics and "flag" not in report.metrics
    assert "nsys_kernel_count" in report.metrics and report.cells[0].kernels == []
    assert report.metrics[:4] == ["wall_s", "cpu_user_s", "cpu_sys_s", "max_rss_mib"]


def test_baseline_trials_and_overhead(make_run) -> None:
    run_dir = make_run({"a": [trial("a", i, wall_s=2.0 + i / 100) for i in range(4)]},
                       baseline={"a": [trial("a", i, wall_s=1.0 + i / 100, baseline=True)
                                       for i in range(4)]})
    [cell] = build_report(run_dir).cells
    assert [t.name for t in cell.trials] == [f"trial_{i}" for i in range(4)] + \
        [f"baseline_{i}" for i in range(4)]
    assert cell.metrics["wall_s"].median == pytest.approx(2.015)
    assert cell.baseline["wall_s"].median == pytest.approx(1.015)
    assert cell.overhead["wall_s"].ratio == pytest.approx(2.015 / 1.015)


@pytest.mark.parametrize("env, expected", [
    (None, "env.json is missing"),
    ({**ENV, "nvidia": None, "partial_reasons": {"nvidia": "no nvidia tool found on PATH",
                                                "amd": "no amd tool found on PATH"}},
     "no GPU recorded"),
    ({**ENV, "partial_reasons": {"packages": "OSError: boom"}},
     "environment snapshot incomplete: packages: OSError: boom"),
    ({**ENV, "nvidia": None, "partial_reasons": {"nvidia": "nvidia-smi exited 9: NVML"}},
     "GPU query failed: nvidia: nvidia-smi exited 9: NVML"),
])
def test_environment_warnings(make_run, env, expected) -> None:
    report = build_report(make_run({"a": [trial("a", 0)]}, env=env))
    assert any(expected in n.message for n in report.warnings if n.kind == "env")


def test_a_missing_amd_tool_on_an_nvidia_machine_is_not_a_warning(make_run) -> None:
    report = build_report(make_run({"a": [trial("a", 0)]}))
    assert not [n for n in report.warnings if n.kind == "env"]


@pytest.mark.parametrize("amd, names", [
    ({"tool": "amd-smi", "data": [{"gpu": 0, "asic": {"market_name": "AMD Instinct MI300X"},
                                   "driver": {"version": "6.10.5"},
                                   "vram": {"size": {"value": 196592, "unit": "MB"}}}]},
     [("AMD Instinct MI300X", "6.10.5", "196592 MB")]),
    ({"tool": "amd-smi", "data": {"gpu_data": [{"asic": {"market_name": "MI250X"}}]}},
     [("MI250X", None, None)]),
    ({"tool": "rocm-smi", "data": {"card0": {"Card Series": "Instinct MI210"}, "system": {}}},
     [("Instinct MI210", None, None)]),
    ({"tool": "amd-smi", "data": "garbage"}, []),
])
def test_amd_snapshots(make_run, amd, names) -> None:
    env = {**ENV, "nvidia": None, "amd": amd, "rocm_version": "6.4.2", "cuda_version": None}
    h = build_report(make_run({"a": [trial("a", 0)]}, env=env)).header
    assert [(g.name, g.driver, g.memory) for g in h.gpus] == names
    assert h.software["ROCm"] == "6.4.2" and "CUDA" not in h.software


def test_odd_env_types_do_not_break_the_header(make_run) -> None:
    env = {"host": "not a mapping", "packages": None, "nvidia": [{"name": "X",
                                                                 "memory.total": "[N/A]"}]}
    h = build_report(make_run({"a": [trial("a", 0)]}, env=env)).header
    assert h.host is None and h.software["torch"] == "unknown"
    assert [(g.name, g.memory) for g in h.gpus] == [("X", "[N/A]")]


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="no such directory"):
        build_report(tmp_path / "nowhere")
    with pytest.raises(RunDirError, match="not an aorta run directory"):
        build_report(tmp_path)
    (tmp_path / "run.json").write_text("[1, 2]")
    with pytest.raises(RunDirError, match="not an aorta run record"):
        build_report(tmp_path)
    (tmp_path / "run.json").write_text("{ nope")
    with pytest.raises(RunDirError, match="unreadable"):
        build_report(tmp_path)
    (tmp_path / "run.json").write_text('{"run": "x", "schema_version": 99}')
    with pytest.raises(RunDirError, match="newer aorta .* upgrade"):
        build_report(tmp_path)


def test_a_run_killed_before_its_first_trial(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text(json.dumps({"run": "r", "schema_version": 1,
                                                   "status": "running"}))
    report = build_report(tmp_path)    # no lock: its driver is gone, the run is interrupted
    assert report.cells == [] and report.header.status == "interrupted"
    assert any(n.kind == "env" for n in report.warnings)
