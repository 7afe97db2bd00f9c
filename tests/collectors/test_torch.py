"""The torch collector without running torch: options, conflicts, argv and env shapes, summarize
on real and written traces, every capture state, and probe from real package metadata."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import site
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from importlib.metadata import PathDistribution
from pathlib import Path
from typing import Any

import pytest

import aorta.collectors.torch.collector as torch_collector
from aorta.base import source_tree
from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.conflicts import check_conflicts
from aorta.collectors.registry import get
from aorta.collectors.torch.collector import TorchCollector, TorchLaunchError, TorchOptions, torch_build
from aorta.base.errors import ConflictError, OptionError, SetupError
from aorta.parsers.skips import Skips
from aorta.parsers.torch_trace import read_trace_figures

TORCH = TorchCollector()
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "torch"
OUT = Path("/runs/r/cells/c/trial_0/torch")
SRC = str(Path(torch_collector.__file__).resolve().parents[3])
LAUNCHER = ["-m", "aorta.launchers.torch_profile", "--out", str(OUT)]
RAN = TrialOutcome(exit_code=0, signal=None, timed_out=False, launched=True)


def options(raw: dict[str, Any] | None = None) -> TorchOptions:
    opts = TORCH.validate(raw)
    assert isinstance(opts, TorchOptions)
    return opts


def wrap(argv: list[str], raw: dict[str, Any] | None = None, base: dict[str, str] | None = None,
         launch_env: dict[str, str] | None = None,
         unset: frozenset[str] = frozenset()) -> Launch:
    launch = Launch(tuple(argv), launch_env or {}, unset)
    return TORCH.wrap(launch, OUT, options(raw), TrialContext("c", 0, OUT.parent, base or {}))


def summarize(files: dict[str, Path | str], tmp_path: Path, raw: dict[str, Any] | None = None,
              outcome: TrialOutcome = RAN) -> dict[str, Any]:
    """Put `files` (name -> fixture path or text) into a fresh collector dir and summarize it."""
    out = tmp_path / "torch"
    out.mkdir()
    for name, source in files.items():
        if isinstance(source, Path):
            shutil.copyfile(source, out / name)
        else:
            (out / name).write_text(source)
    return TORCH.summarize(out, options(raw), outcome)


# --- options ---------------------------------------------------------------------------------

def test_defaults() -> None:
    opts = options()
    assert (opts.mode, opts.activities, opts.record_shapes, opts.with_stack, opts.profile_memory,
            opts.schedule, opts.row_limit) == ("cli", ["cpu", "gpu"], False, False, False, None, 50)


@pytest.mark.parametrize("raw, expected", [
    ("cpu, gpu", ["cpu", "gpu"]),
    ("CPU cuda", ["cpu", "cuda"]),
    (["hip"], ["hip"]),
    (["cpu", "cpu", "xpu"], ["cpu", "xpu"]),
])
def test_activities_accept_lists_and_strings(raw: Any, expected: list[str]) -> None:
    assert options({"activities": raw}).activities == expected


@pytest.mark.parametrize("raw, message", [
    (["cpu", "tpu"], "collect.torch.activities[1]: Input should be 'cpu', 'gpu', 'cuda', 'hip' or 'xpu', got 'tpu'"),
    (["cuda", "hip"], "collect.torch.activities: name at most one GPU activity, got cuda, hip"),
    (["gpu", "cuda"], "name at most one GPU activity, got gpu, cuda"),
    ([], "collect.torch.activities: name at least one activity"),
    ("", "name at least one activity"),
    (7, "collect.torch.activities: Input should be a valid list, got 7"),
])
def test_bad_activities_name_the_key_and_allowed_values(raw: Any, message: str) -> None:
    with pytest.raises(OptionError) as err:
        options({"activities": raw})
    assert message in str(err.value)


def test_booleans_are_booleans() -> None:
    opts = options({"record_shapes": "yes", "with_stack": 1, "profile_memory": "false"})
    assert (opts.record_shapes, opts.with_stack, opts.profile_memory) == (True, True, False)
    with pytest.raises(OptionError, match=r"collect\.torch\.record_shapes: .*got 'maybe'"):
        options({"record_shapes": "maybe"})


@pytest.mark.parametrize("raw, message", [
    ({"mode": "auto"}, "collect.torch.mode: Input should be 'cli' or 'env', got 'auto'"),
    ({"row_limit": 0}, "collect.torch.row_limit: Input should be greater than or equal to 1"),
    ({"rows": 3}, "collect.torch.rows: unknown key; allowed: activities, mode, profile_memory, "
                  "record_shapes, row_limit, schedule, with_stack"),
    ({"mode": "env", "schedule": {"wait": 1}}, "collect.torch.schedule.active: required key is missing"),
    ({"mode": "env", "schedule": {"active": 2, "wait": -1}},
     "collect.torch.schedule.wait: Input should be greater than or equal to 0"),
    ({"mode": "env", "schedule": {"active": 2, "skip": 1}}, "collect.torch.schedule.skip: unknown key"),
])
def test_bad_options(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError) as err:
        options(raw)
    assert message in str(err.value)


def test_schedule_needs_mode_env() -> None:
    with pytest.raises(OptionError) as err:
        options({"schedule": {"active": 3}})
    text = str(err.value)
    assert text.startswith("collect.torch.schedule: a schedule counts steps")
    assert "set mode: env" in text and "prof.step()" in text
    opts = options({"mode": "env", "schedule": {"active": 3}})
    assert opts.schedule is not None
    assert (opts.schedule.wait, opts.schedule.warmup, opts.schedule.active,
            opts.schedule.repeat) == (0, 1, 3, 1)


# --- conflicts -------------------------------------------------------------------------------

def test_gpu_activity_claims_cupti() -> None:
    assert TORCH.claims(options()) == frozenset({"cupti"})
    assert TORCH.claims(options({"activities": "cpu,hip"})) == frozenset({"cupti"})
    assert TORCH.claims(options({"activities": "cpu"})) == frozenset()
    assert TORCH.wrap_rank == 80 and get("torch").name == "torch"


@pytest.mark.parametrize("other, raw", [("proton", {"backend": "cupti"}), ("ncu", None),
                                        ("nsys", None)])
def test_refused_next_to_another_cupti_client(other: str, raw: dict[str, Any] | None) -> None:
    with pytest.raises(ConflictError) as err:
        check_conflicts({other: get(other).validate(raw), "torch": options()})
    assert "torch (activities: cpu, gpu)" in str(err.value)
    assert "one CUPTI subscriber per process" in str(err.value)


def test_cpu_only_torch_runs_next_to_ncu() -> None:
    check_conflicts({"ncu": get("ncu").validate(None), "torch": options({"activities": "cpu"})})


# --- wrap, mode: cli -------------------------------------------------------------------------

def test_script_argv() -> None:
    launch = wrap(["python3", "-u", "bench.py", "--size", "1024"])
    assert list(launch.argv) == ["python3", "-u", *LAUNCHER, "--activities", "cpu,gpu",
                                 "--row-limit", "50", "--", "bench.py", "--size", "1024"]


def test_every_flag_rendered() -> None:
    launch = wrap(["python", "s.py"], {"activities": "cuda", "record_shapes": True,
                                       "with_stack": True, "profile_memory": True, "row_limit": 7})
    assert list(launch.argv) == ["python", *LAUNCHER, "--activities", "cuda", "--record-shapes",
                                 "--with-stack", "--profile-memory", "--row-limit", "7",
                                 "--", "s.py"]


@pytest.mark.parametrize("argv", [["python3", "-m", "pytest", "-q", "-k", "x"],
                                  ["python3", "-mpytest", "-q", "-k", "x"]])
def test_pytest_launch(argv: list[str]) -> None:
    launch = wrap(argv)
    assert list(launch.argv) == ["python3", *LAUNCHER, "--activities", "cpu,gpu", "--row-limit",
                                 "50", "--pytest", "--", "-q", "-k", "x"]


@pytest.mark.parametrize("argv, problem", [
    (["./gemm", "--n", "4"], "needs a Python script launch"),
    (["python3", "-c", "print(1)"], "cannot wrap the interpreter option '-c'"),
    (["python3", "-m", "torch.utils.bottleneck", "x.py"], "cannot wrap 'python -m torch.utils.bottleneck'"),
    (["python3"], "needs a script path"),
    ([], "the command is empty"),
])
def test_refusals_name_mode_env(argv: list[str], problem: str) -> None:
    with pytest.raises(TorchLaunchError) as err:
        wrap(argv)
    assert isinstance(err.value, SetupError)
    assert problem in str(err.value) and "use mode: env instead" in str(err.value)


def test_pythonpath_puts_aorta_first_and_keeps_the_rest() -> None:
    assert source_tree.aorta_root() == SRC        # these tests run from the checkout
    assert wrap(["python3", "s.py"]).env == {"PYTHONPATH": SRC}
    base = {"PYTHONPATH": os.pathsep.join(["/opt/lib", SRC])}
    assert wrap(["python3", "s.py"], base=base).env["PYTHONPATH"] == \
        os.pathsep.join([SRC, "/opt/lib"])
    # an outer collector's or the cell's PYTHONPATH wins over the base environment
    launch = wrap(["python3", "s.py"], base=base, launch_env={"PYTHONPATH": "/cell", "X": "1"})
    assert launch.env == {"PYTHONPATH": os.pathsep.join([SRC, "/cell"]), "X": "1"}
    assert wrap(["python3", "s.py"], base=base, unset=frozenset({"PYTHONPATH"})).env == \
        {"PYTHONPATH": SRC}


@pytest.fixture
def aorta_installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """As if aorta lived in a site directory (the answer is cached, so clear it around)."""
    monkeypatch.setattr(site, "getsitepackages", lambda: [SRC])
    source_tree.aorta_root.cache_clear()
    yield
    monkeypatch.undo()
    source_tree.aorta_root.cache_clear()


def test_no_pythonpath_when_aorta_is_installed(aorta_installed: None) -> None:
    assert source_tree.aorta_root() is None
    launch = wrap(["python3", "-I", "s.py"], base={"PYTHONPATH": "/opt/lib"})
    assert launch.env == {} and launch.argv[:3] == ("python3", "-I", "-m")


@pytest.mark.parametrize("flag", ["-I", "-E"])
def test_flags_that_ignore_pythonpath_are_refused_for_a_checkout(flag: str) -> None:
    with pytest.raises(TorchLaunchError) as err:
        wrap(["python3", "-u", flag, "s.py"])
    assert f"interpreter option {flag} ignores PYTHONPATH" in str(err.value)
    assert "mode: env" in str(err.value)


# --- wrap, mode: env -------------------------------------------------------------------------

def test_env_mode_leaves_argv_and_hands_variables() -> None:
    launch = wrap(["./native_app", "--n", "3"], {
        "mode": "env", "activities": "cpu,gpu", "record_shapes": True, "row_limit": 9,
        "schedule": {"wait": 1, "warmup": 2, "active": 3, "repeat": 4}},
        launch_env={"CUDA_VISIBLE_DEVICES": "1"})
    assert launch.argv == ("./native_app", "--n", "3")
    assert launch.env == {
        "CUDA_VISIBLE_DEVICES": "1",
        "AORTA_TORCH_DIR": str(OUT), "AORTA_TORCH_TRACE": str(OUT / "trace.json"),
        "AORTA_TORCH_ACTIVITIES": "cpu,gpu", "AORTA_TORCH_RECORD_SHAPES": "1",
        "AORTA_TORCH_WITH_STACK": "0", "AORTA_TORCH_PROFILE_MEMORY": "0",
        "AORTA_TORCH_ROW_LIMIT": "9", "AORTA_TORCH_SCHEDULE": "wait=1,warmup=2,active=3,repeat=4",
    }


def test_env_mode_without_schedule_sets_no_schedule_variable() -> None:
    assert "AORTA_TORCH_SCHEDULE" not in wrap(["python3", "s.py"], {"mode": "env"}).env


# --- summarize: real traces ------------------------------------------------------------------

@pytest.mark.parametrize("fixture, count, total_us, top", [
    ("mm_trace.json", 7, 189.665, "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize128x64x8"),
    ("vecadd_trace.json", 28, 71.266, None),
])
def test_h200_traces_give_the_common_scheme(tmp_path: Path, fixture: str, count: int,
                                            total_us: float, top: str | None) -> None:
    metrics = summarize({"trace.json": FIXTURES / "h200" / fixture}, tmp_path)
    assert metrics["torch_capture"] == "ok" and "torch_capture_reason" not in metrics
    assert metrics["torch_kernel_count"] == count
    assert metrics["torch_gpu_time_ms"] == pytest.approx(total_us / 1e3, rel=1e-9)
    assert sum(row["calls"] for row in metrics["torch_kernels"]) == count
    assert metrics["torch_top_kernel_ms"] == metrics["torch_kernels"][0]["total_ms"]
    assert len(metrics["torch_top_kernels"]) == min(5, len(metrics["torch_kernels"]))
    if top:
        assert metrics["torch_top_kernels"][0].startswith(top)
    assert "torch_cpu_time_ms" not in metrics      # CPU figures only without GPU kernels
    assert metrics["torch_artifact_dir"] == str(tmp_path / "torch")


def test_cpu_trace_gives_top_level_operator_time(tmp_path: Path) -> None:
    fixture = FIXTURES / "cpu" / "matmul_trace.json"
    metrics = summarize({"trace.json": fixture}, tmp_path)
    events = [e for e in json.loads(fixture.read_text())["traceEvents"] if e.get("cat") == "cpu_op"]
    top_level = [e for e in events
                 if not any(o is not e and o["ts"] <= e["ts"] < o["ts"] + o["dur"] and
                            o["dur"] > e["dur"] for o in events)]
    assert sorted(e["name"] for e in top_level) == [
        "aten::linear", "aten::matmul", "aten::matmul", "aten::matmul", "aten::randn"]
    assert metrics["torch_capture"] == "ok"
    assert metrics["torch_cpu_op_count"] == 5
    assert metrics["torch_cpu_time_ms"] == pytest.approx(sum(e["dur"] for e in top_level) / 1e3)
    assert metrics["torch_cpu_time_ms"] < sum(e["dur"] for e in events) / 1e3   # no double count
    assert metrics["torch_cpu_time_ms"] == pytest.approx(
        sum(row["self_ms"] for row in metrics["torch_ops"]))
    calls = {row["name"]: row["calls"] for row in metrics["torch_ops"]}
    assert calls["aten::mm"] == 4 and calls["aten::resolve_conj"] == 11
    own = [row["self_ms"] for row in metrics["torch_ops"]]
    assert own == sorted(own, reverse=True)
    assert metrics["torch_top_ops"] == [row["name"] for row in metrics["torch_ops"][:5]]
    assert metrics["torch_top_op_ms"] == metrics["torch_ops"][0]["self_ms"]
    assert "torch_gpu_time_ms" not in metrics and "torch_kernel_count" not in metrics


# --- summarize: written traces ---------------------------------------------------------------

def test_nested_operators_count_once(tmp_path: Path) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / "nested_ops.json"}, tmp_path)
    assert metrics["torch_capture"] == "ok"
    assert metrics["torch_cpu_time_ms"] == pytest.approx(0.195)
    assert metrics["torch_cpu_op_count"] == 3
    assert {r["name"]: r["self_ms"] for r in metrics["torch_ops"]} == pytest.approx(
        {"op::A": 0.05, "op::D": 0.05, "op::E": 0.045, "op::B": 0.04, "op::C": 0.01})
    assert [r["name"] for r in metrics["torch_ops"]][:2] in (["op::A", "op::D"], ["op::D", "op::A"])


def test_an_operator_inside_itself_counts_once(tmp_path: Path) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / "recursive_ops.json"}, tmp_path)
    assert metrics["torch_cpu_time_ms"] == pytest.approx(0.05)
    assert metrics["torch_cpu_op_count"] == 2
    assert metrics["torch_ops"] == [{"name": "op::R", "calls": 3, "self_ms": pytest.approx(0.05)}]


def test_row_limit_cuts_the_operator_table(tmp_path: Path) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / "nested_ops.json"}, tmp_path,
                        {"row_limit": 2})
    assert len(metrics["torch_ops"]) == 2 and len(metrics["torch_top_ops"]) == 5


def test_values_that_are_not_durations_are_skipped(tmp_path: Path) -> None:
    """Issue 12.1: each kernel event left out makes the capture partial, never ok."""
    metrics = summarize({"trace.json": FIXTURES / "written" / "bad_values.json"}, tmp_path)
    assert metrics["torch_capture"] == "partial" and metrics["torch_skipped"] == 8
    assert metrics["torch_kernels"] == [{"name": "good_kernel", "calls": 2,
                                         "total_ms": pytest.approx(0.005)}]
    assert "torch_kernel_count" not in metrics
    assert "has dur 'abc'" in metrics["torch_capture_reason"] or \
        "has dur" in metrics["torch_capture_reason"]


def test_bare_event_list(tmp_path: Path) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / "bare_list.json"}, tmp_path)
    assert (metrics["torch_kernel_count"], metrics["torch_top_kernels"]) == (3, ["k1", "k2"])
    assert metrics["torch_gpu_time_ms"] == pytest.approx(0.007)


def test_every_cycle_trace_is_totalled(tmp_path: Path) -> None:
    mm = FIXTURES / "h200" / "mm_trace.json"
    metrics = summarize({"trace.json": mm, "trace.2.json": mm, "trace.3.json.partial": "{",
                         "host_1.1700000000.pt.trace.json": FIXTURES / "written" / "bare_list.json",
                         "trace.json.partial": "{", "summary.json": "{}"}, tmp_path)
    assert metrics["torch_kernel_count"] == 7 + 7 + 3
    assert metrics["torch_gpu_time_ms"] == pytest.approx((2 * 189.665 + 7) / 1e3)


@pytest.mark.parametrize("fixture, reason", [
    ("overflow_kernels.json", "kernel durations add up to infinity"),
    ("overflow_ops.json", "operator durations add up to infinity"),
    ("no_trace_events.json", "trace.json: no traceEvents list"),
])
def test_unparsed(tmp_path: Path, fixture: str, reason: str) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / fixture}, tmp_path)
    assert metrics["torch_capture"] == "unparsed"
    assert reason in metrics["torch_capture_reason"]
    assert not any(k.endswith(("_time_ms", "_count")) for k in metrics)


def test_a_cut_trace_is_partial(tmp_path: Path) -> None:
    """The events before the cut are read; the capture says it was cut (issue 12.1)."""
    metrics = summarize({"trace.json": FIXTURES / "written" / "truncated.json"}, tmp_path)
    assert metrics["torch_capture"] == "partial" and metrics["torch_skipped"] >= 1
    assert "cut short" in metrics["torch_capture_reason"]
    assert "torch_kernel_count" not in metrics


def test_lost_gpu_capture_is_empty_not_ok(tmp_path: Path) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / "launches_without_kernels.json"},
                        tmp_path)
    assert metrics["torch_capture"] == "empty"
    assert "launched 3 GPU kernels" in metrics["torch_capture_reason"]
    assert "CUPTI" in metrics["torch_capture_reason"]
    assert metrics["torch_cpu_time_ms"] == pytest.approx(0.04)   # still true, still published
    assert "torch_kernel_count" not in metrics


def test_launches_without_kernels_are_fine_when_only_cpu_was_recorded(tmp_path: Path) -> None:
    # Seen on an H200: `activities: [cpu]` records the runtime's launch calls, never kernels.
    metrics = summarize({"trace.json": FIXTURES / "written" / "launches_without_kernels.json",
                         "summary.json": '{"activities": ["cpu"]}'}, tmp_path,
                        {"activities": ["cpu"]})
    assert metrics["torch_capture"] == "ok"
    assert metrics["torch_cpu_time_ms"] == pytest.approx(0.04)


def test_nothing_recorded_is_empty(tmp_path: Path) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / "no_events.json"}, tmp_path)
    assert metrics["torch_capture"] == "empty"
    assert "no GPU kernel and no CPU operator" in metrics["torch_capture_reason"]
    assert set(metrics) == {"torch_artifact_dir", "torch_capture", "torch_capture_reason"}


def test_nothing_recorded_names_what_the_trace_holds(tmp_path: Path) -> None:
    events = [{"ph": "X", "cat": "cuda_runtime", "name": "cudaMalloc", "ts": 0, "dur": 1}] * 2
    metrics = summarize({"trace.json": json.dumps({"traceEvents": events})}, tmp_path)
    assert metrics["torch_capture"] == "empty"
    assert metrics["torch_capture_reason"].endswith("only 2 cuda_runtime events")


def test_older_kineto_categories_read_as_todays(tmp_path: Path) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / "old_categories.json"}, tmp_path)
    assert metrics["torch_capture"] == "ok"
    assert metrics["torch_kernels"] == [{"name": "volta_sgemm_128x64_nn", "calls": 2,
                                         "total_ms": pytest.approx(0.02)}]


def test_older_kineto_operators_leave_the_step_annotation_out(tmp_path: Path) -> None:
    figures = read_trace_figures([FIXTURES / "written" / "old_categories.json"], Skips())
    assert (figures.op_count, figures.cpu_us, figures.launches) == (1, 100.0, 2)


def test_a_range_profiler_trace_says_what_it_holds(tmp_path: Path) -> None:
    metrics = summarize({"trace.json": FIXTURES / "written" / "range_profiler.json"}, tmp_path)
    assert metrics["torch_capture"] == "empty"
    reason = metrics["torch_capture_reason"]
    assert "2 cuda_profiler_range events (CUPTI range-profiler mode" in reason
    assert "CUPTI client" not in reason


def test_a_gzipped_trace_alone_reads_as_the_plain_one(tmp_path: Path) -> None:
    mm = FIXTURES / "h200" / "mm_trace.json"
    packed = gzip.compress(mm.read_bytes())
    metrics = summarize({}, tmp_path)
    assert metrics["torch_capture"] == "missing"
    (tmp_path / "torch" / "host_1.1700000000000.pt.trace.json.gz").write_bytes(packed)
    metrics = TORCH.summarize(tmp_path / "torch", options(None), RAN)
    (tmp_path / "plain").mkdir()
    plain = summarize({"trace.json": mm}, tmp_path / "plain")
    assert metrics["torch_capture"] == "ok"
    assert {k: v for k, v in metrics.items() if k != "torch_artifact_dir"} == \
        {k: v for k, v in plain.items() if k != "torch_artifact_dir"}


def test_a_gzipped_copy_beside_its_plain_trace_is_not_counted_twice(tmp_path: Path) -> None:
    mm = FIXTURES / "h200" / "mm_trace.json"
    (tmp_path / "plain").mkdir()
    plain = summarize({"trace.json": mm}, tmp_path / "plain")
    summarize({"trace.json": mm}, tmp_path)
    (tmp_path / "torch" / "trace.json.gz").write_bytes(gzip.compress(mm.read_bytes()))
    both = TORCH.summarize(tmp_path / "torch", options(None), RAN)
    assert {k: v for k, v in both.items() if k != "torch_artifact_dir"} == \
        {k: v for k, v in plain.items() if k != "torch_artifact_dir"}


@pytest.mark.parametrize("damage, state, reason", [
    (lambda b: b[:len(b) // 2], "partial", "cut short"),
    (lambda b: b[:-8], "partial", "the gzip stream ends before its end marker: cut short"),
    (lambda b: b[:15], "unparsed", "trace.json.gz: gzip cut short"),
    (lambda b: b[:300] + bytes(x ^ 0xFF for x in b[300:310]) + b[310:], "unparsed",
     "trace.json.gz: damaged gzip data"),
])
def test_a_damaged_gzip_trace_says_so(tmp_path: Path, damage: Any, state: str,
                                      reason: str) -> None:
    packed = damage(gzip.compress((FIXTURES / "h200" / "mm_trace.json").read_bytes()))
    (tmp_path / "trace.json.gz").write_bytes(packed)
    metrics = summarize({"trace.json.gz": tmp_path / "trace.json.gz"}, tmp_path)
    assert (metrics["torch_capture"], "torch_kernel_count" in metrics) == (state, False)
    assert reason in metrics["torch_capture_reason"]


def test_launcher_summary_is_published(tmp_path: Path) -> None:
    summary = {"torch_version": "2.11.0+cu130", "activities": ["cpu", "cuda"], "errors": []}
    metrics = summarize({"trace.json": FIXTURES / "h200" / "mm_trace.json",
                         "summary.json": json.dumps(summary)}, tmp_path)
    assert (metrics["torch_version"], metrics["torch_activities"]) == ("2.11.0+cu130", ["cpu", "cuda"])


def test_a_malformed_launcher_summary_publishes_nothing(tmp_path: Path) -> None:
    metrics = summarize({"summary.json": '{"activities": [1, 2], "torch_version": 3}'}, tmp_path)
    assert "torch_version" not in metrics and "torch_activities" not in metrics
    assert metrics["torch_capture"] == "missing"


# --- summarize: missing ----------------------------------------------------------------------

def outcome(**changes: Any) -> TrialOutcome:
    fields = {"exit_code": 0, "signal": None, "timed_out": False, "launched": True,
              "stderr_path": None} | changes
    return TrialOutcome(**fields)


@pytest.mark.parametrize("files, raw, how, reason", [
    ({}, None, outcome(launched=False, exit_code=None), "the payload never started"),
    ({"summary.json": '{"error": "torch is not importable by /usr/bin/python3: No module named torch"}'},
     None, outcome(exit_code=2), "the launcher did not run the payload: torch is not importable"),
    ({"summary.json": '{"errors": ["could not write trace.json: OSError: disk full"]}'},
     None, outcome(), "could not write the trace: could not write trace.json: OSError: disk full"),
    ({}, {"mode": "env"}, outcome(), "must export the trace to $AORTA_TORCH_TRACE"),
    ({}, None, outcome(timed_out=True, signal=15, exit_code=None), "the trial timed out before"),
    ({}, None, outcome(signal=9, exit_code=None), "was killed by signal 9 before"),
    ({"trace.json.partial": '{"traceEvents": ['}, None, outcome(),
     "the trace export was cut short (trace.json.partial left behind)"),
    ({}, None, outcome(exit_code=1), "the launcher never got to write its files"),
    ({"summary.json": '{"errors": []}'}, None, outcome(), "the launcher wrote no trace"),
])
def test_missing_reasons(tmp_path: Path, files: dict[str, str], raw: dict[str, Any] | None,
                         how: TrialOutcome, reason: str) -> None:
    metrics = summarize(dict(files), tmp_path, raw, how)
    assert metrics["torch_capture"] == "missing"
    assert reason in metrics["torch_capture_reason"]


def test_missing_launcher_module_is_named(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    stderr.write_text("x" * 20000 + "\n/usr/bin/python3: Error while finding module specification "
                      "for 'aorta.launchers.torch_profile' (ModuleNotFoundError: No module named "
                      "'aorta')\n")
    metrics = summarize({}, tmp_path, None, outcome(exit_code=1, stderr_path=stderr))
    assert "cannot import aorta's launcher" in metrics["torch_capture_reason"]


# --- probe -----------------------------------------------------------------------------------

def fake_torch(tmp_path: Path, version: str, version_py: str | None) -> PathDistribution:
    """An installed-looking torch: a dist-info and, if given, `torch/version.py`."""
    info = tmp_path / f"torch-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\n")
    if version_py is not None:
        (tmp_path / "torch").mkdir()
        (tmp_path / "torch" / "version.py").write_text(textwrap.dedent(version_py))
    return PathDistribution(info)


@pytest.mark.parametrize("version, text, build", [
    ("2.11.0+cu130", """\
        from typing import Optional
        __version__ = '2.11.0+cu130'
        cuda: Optional[str] = '13.0'
        hip: Optional[str] = None
        """, "cuda 13.0"),
    ("2.5.1+rocm6.2", "cuda = None\nhip = '6.2.41133-dd7f95766'\n", "rocm 6.2.41133-dd7f95766"),
    ("2.13.0+cpu", "cuda: Optional[str] = None\nhip: Optional[str] = None\n", "cpu"),
    ("2.11.0+cu130", None, "cuda"),                  # no version.py: the local version tag
    ("2.5.1+rocm6.2", "garbage = (\n", "rocm"),
    ("2.4.0", None, "unknown"),
    ("2.11.0", "cuda_version = '12'\ncuda: str = None\nhip: str = None\n", "cpu"),
    ("2.11.0", "cuda =\n  cuda = '1'\nxpu:str='20250101'\r\n", "xpu 20250101"),
])
def test_torch_build_from_files(tmp_path: Path, version: str, text: str | None, build: str) -> None:
    assert torch_build(fake_torch(tmp_path, version, text)) == build


def test_probe_here() -> None:
    cap = TORCH.probe()
    try:
        from importlib.metadata import version
        installed = version("torch")
    except Exception:  # noqa: BLE001
        assert not cap.usable and "pip install torch" in cap.fix
        return
    assert cap.usable and cap.version == installed and cap.name == "torch"
    assert set(cap.details) == {"build", "gpu", "gpu_kernels"}
    if not cap.details["gpu_kernels"]:
        assert "only CPU operators are measured" in cap.reason


def test_importing_the_collector_does_not_import_torch() -> None:
    code = ("import sys, aorta.collectors.torch.collector as c; c.TorchCollector().probe(); "
            "print('torch' in sys.modules)")
    env = dict(os.environ, PYTHONPATH=SRC)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == "False"


def test_sweep_refuses_torch_with_ncu_before_running(tmp_path: Path) -> None:
    from aorta_testing import run_aorta, write_recipe

    recipe = write_recipe(tmp_path, """\
        schema_version: 1
        trials: 1
        collect: {torch: {}, ncu: {}}
        """)
    marker = tmp_path / "ran"
    done = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "out"),
                     "--", sys.executable, "-c", f"open({str(marker)!r}, 'w')", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "torch (activities: cpu, gpu)" in done.stderr and "CUPTI" in done.stderr
    assert not marker.exists()
