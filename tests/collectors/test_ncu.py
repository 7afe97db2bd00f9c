"""The ncu collector on the CPU: options, the argv it builds, conflicts, and summarize.

Nsight Compute cannot run here, so `summarize` is driven through a stand-in `ncu` script that
answers `--version` and `--import FILE --csv --page raw` the way ncu does (it prints FILE, which
the tests fill with a real H200 export); its failure modes are selected by FILE's first line.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.conflicts import check_conflicts
from aorta.collectors.ncu.collector import (LAUNCH_RECORD_LIMIT, NcuCollector, NcuOptions, export_raw,
                                  ncu_argv, profile_metrics)
from aorta.collectors.binaries import gpu_present
from aorta.collectors.ncu.counters import counter_access
from aorta.collectors.registry import get, wrap_order
from aorta.base.errors import ConflictError, OptionError, SetupError
from aorta.parsers.ncu_csv import NcuLaunch, NcuProfile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "ncu"
TIME = "gpu__time_duration.sum"
DRAM = "dram__bytes.sum"
SM = "sm__throughput.avg.pct_of_peak_sustained_elapsed"

FAKE_NCU = f"""#!{sys.executable}
import os, subprocess, sys, time
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA (R) Nsight Compute Command Line Profiler")
    print("Copyright (c) 2018-2025 NVIDIA Corporation")
    print("Version 2025.3.1.0 (build 36398880) (public-release)")
    sys.exit(0)
if args[:1] == ["--import"] and args[2:] == ["--csv", "--page", "raw"]:
    text = open(args[1]).read()
    if text.startswith("FAIL"):
        print("==ERROR== Failed to open report file", file=sys.stderr)
        sys.exit(1)
    if text.startswith("HANG"):
        child = subprocess.Popen(["sleep", "60"])
        open(text.split()[1], "w").write(str(child.pid))
        time.sleep(60)
    sys.stdout.write(text)
    sys.exit(0)
print("unexpected arguments", args, file=sys.stderr)
sys.exit(2)
"""


@pytest.fixture
def fake_ncu(tmp_path: Path) -> str:
    path = tmp_path / "bin" / "ncu"
    path.parent.mkdir()
    path.write_text(FAKE_NCU)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def ctx(trial_dir: Path, env: dict[str, str]) -> TrialContext:
    return TrialContext("c", 0, trial_dir, env)


def outcome(stderr: Path | None = None, launched: bool = True,
            timed_out: bool = False) -> TrialOutcome:
    return TrialOutcome(0, None, timed_out, launched, stderr, dict(TRIAL_ENV))


# The environment of the trial `wrapped_dir` set up: summarize finds the same tool with it.
TRIAL_ENV: dict[str, str] = {}


def options(**raw: Any) -> NcuOptions:
    result = NcuCollector().validate(raw)
    assert isinstance(result, NcuOptions)
    return result


# --- options ---------------------------------------------------------------------------------

def test_defaults():
    opts = options()
    assert opts.metrics == [TIME]
    assert (opts.set, opts.kernel_regex, opts.launch_skip, opts.launch_count) == (None,) * 4
    assert (opts.clock_control, opts.replay_mode, opts.target_processes) == ("none", None, "all")


@pytest.mark.parametrize("raw", [f"{DRAM}, {SM}", f"{DRAM} {SM} {TIME}", [DRAM, SM, DRAM]])
def test_metrics_list_or_string_keeps_time_first_once(raw: Any):
    assert options(metrics=raw).metrics == [TIME, DRAM, SM]


@pytest.mark.parametrize(("raw", "message"), [
    ({"metrics": "regex:sm__.*"}, "collect.ncu.metrics: 'regex:sm__.*' is not a metric name"),
    ({"metrics": [DRAM, 3]}, "collect.ncu.metrics: must be a list of strings"),
    ({"metrics": 5}, "collect.ncu.metrics: must be a list of strings or a comma-separated"),
    ({"set": "full set"}, "collect.ncu.set: must be a section set identifier"),
    ({"kernel_regex": "(gemm"}, "collect.ncu.kernel_regex: is not a valid regular expression"),
    ({"kernel_regex": "regex:"}, "collect.ncu.kernel_regex: must be a non-empty"),
    ({"launch_skip": -1}, "collect.ncu.launch_skip: Input should be greater than or equal to 0"),
    ({"launch_count": 0}, "collect.ncu.launch_count: Input should be greater than or equal to 1"),
    ({"launch_count": True}, "collect.ncu.launch_count: Input should be a valid integer"),
    ({"launch_skip": "2"}, "collect.ncu.launch_skip: Input should be a valid integer"),
    ({"clock_control": "reset"}, "collect.ncu.clock_control: Input should be 'none' or 'base'"),
    ({"replay_mode": "graph"}, "collect.ncu.replay_mode: Input should be 'kernel', 'application'"),
    ({"target_processes": "children"}, "collect.ncu.target_processes: Input should be 'all'"),
    ({"section": "SpeedOfLight"}, "collect.ncu.section: unknown key; allowed: cache_control, clock_control"),
])
def test_bad_options_name_key_value_and_allowed(raw: dict[str, Any], message: str):
    with pytest.raises(OptionError) as err:
        NcuCollector().validate(raw)
    assert str(err.value).startswith(message)


def test_kernel_regex_prefix_is_optional():
    assert options(kernel_regex="regex:gemm|xmma").kernel_regex == "gemm|xmma"
    assert options(kernel_regex="^add_kernel$").kernel_regex == "^add_kernel$"


def test_options_are_frozen():
    with pytest.raises(Exception):
        options().clock_control = "base"  # type: ignore[misc]


# --- argv ------------------------------------------------------------------------------------

def test_default_argv():
    assert ncu_argv("/opt/ncu", options(), Path("/r/t/ncu")) == [
        "/opt/ncu", "--target-processes", "all", "--clock-control", "none", "--cache-control", "none",
        "--metrics", TIME, "--export", "/r/t/ncu/profile", "--force-overwrite",
        "--log-file", "/r/t/ncu/ncu.log"]


def test_every_option_in_argv():
    opts = options(metrics=[DRAM], set="full", kernel_regex="gemm", launch_skip=2, launch_count=3,
                   clock_control="base", replay_mode="application",
                   target_processes="application-only")
    assert ncu_argv("/opt/ncu", opts, Path("/o")) == [
        "/opt/ncu", "--target-processes", "application-only", "--clock-control", "base", "--cache-control", "none",
        "--set", "full", "--metrics", f"{TIME},{DRAM}", "--kernel-name", "regex:gemm",
        "--launch-skip", "2", "--launch-count", "3", "--replay-mode", "application",
        "--export", "/o/profile", "--force-overwrite", "--log-file", "/o/ncu.log"]


def test_wrap_prefixes_the_command_and_keeps_env(tmp_path: Path, fake_ncu: str):
    launch = Launch(("python3", "mm.py", "--size", "1024"), {"A": "1"}, frozenset({"B"}))
    out = tmp_path / "ncu"
    wrapped = NcuCollector().wrap(launch, out, options(), ctx(tmp_path, {"NCU_BIN": fake_ncu}))
    assert wrapped.argv[0] == fake_ncu
    assert wrapped.argv[-4:] == ("python3", "mm.py", "--size", "1024")
    assert wrapped.argv[-5] == str(out / "ncu.log")
    assert (wrapped.env, wrapped.unset) == ({"A": "1"}, frozenset({"B"}))


def test_ncu_found_on_the_trial_path(tmp_path: Path, fake_ncu: str):
    env = {"PATH": str(Path(fake_ncu).parent)}
    wrapped = NcuCollector().wrap(Launch(("./app",)), tmp_path, options(), ctx(tmp_path, env))
    assert wrapped.argv[0] == fake_ncu


def test_missing_ncu_names_both_ways(tmp_path: Path):
    with pytest.raises(SetupError) as err:
        NcuCollector().wrap(Launch(("./app",)), tmp_path, options(), ctx(tmp_path, {"PATH": ""}))
    assert "$NCU_BIN is not set and 'ncu' is not on PATH" in str(err.value)
    assert "set NCU_BIN" in str(err.value)


def test_ncu_bin_that_is_not_executable(tmp_path: Path):
    plain = tmp_path / "ncu"
    plain.write_text("not a program")
    with pytest.raises(SetupError, match=r"\$NCU_BIN=.* is not an executable file"):
        NcuCollector().wrap(Launch(("./app",)), tmp_path, options(),
                            ctx(tmp_path, {"NCU_BIN": str(plain)}))


@pytest.mark.parametrize("argv", [(), ("--help",)])
def test_a_command_that_is_not_a_program_is_refused(tmp_path: Path, fake_ncu: str,
                                                    argv: tuple[str, ...]):
    with pytest.raises(SetupError, match="must start with a program"):
        NcuCollector().wrap(Launch(argv), tmp_path, options(), ctx(tmp_path, {"NCU_BIN": fake_ncu}))


# --- contract and conflicts ------------------------------------------------------------------

def test_registered_with_rank_and_claim():
    collector = get("ncu")
    assert isinstance(collector, NcuCollector) and collector.wrap_rank == 30
    assert collector.claims(options()) == {"cupti"}
    assert wrap_order(["cprofile", "ncu", "nsys"]) == ["nsys", "ncu", "cprofile"]


def test_ncu_and_nsys_cannot_share_a_trial():
    with pytest.raises(ConflictError, match="one CUPTI subscriber per process"):
        check_conflicts({"nsys": get("nsys").validate(None), "ncu": options()})


def test_ncu_and_cprofile_can():
    check_conflicts({"ncu": options(), "cprofile": get("cprofile").validate(None)})


# --- summarize -------------------------------------------------------------------------------

def wrapped_dir(tmp_path: Path, fake_ncu: str) -> tuple[NcuCollector, Path]:
    collector, out = NcuCollector(), tmp_path / "trial" / "ncu"
    out.mkdir(parents=True)
    TRIAL_ENV.clear()
    TRIAL_ENV["NCU_BIN"] = fake_ncu
    collector.wrap(Launch(("./app",)), out, options(), ctx(out.parent, TRIAL_ENV))
    return collector, out


def test_summarize_the_h200_export(tmp_path: Path, fake_ncu: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    shutil.copy(FIXTURES / "h200" / "mm_raw.csv", out / "profile.ncu-rep")
    m = collector.summarize(out, options(metrics=[DRAM, SM, "lts__t_bytes.sum"]), outcome())
    assert m["ncu_capture"] == "ok", m.get("ncu_capture_reason")
    assert m["ncu_kernel_count"] == 7
    assert m["ncu_gpu_time_ms"] == pytest.approx(0.21344)
    assert m["ncu_top_kernel_ms"] == pytest.approx(0.186304)
    assert m["ncu_top_kernels"][0].startswith("sm80_xmma_gemm")
    assert [row["calls"] for row in m["ncu_kernels"]] == [3, 2, 2]
    assert m["ncu_gpu__time_duration_sum_mean"] == pytest.approx(213_440 / 7)
    assert m["ncu_dram__bytes_sum_mean"] == pytest.approx(
        (10240 + 9984 + 8458496 * 2 + 8458752 + 4256768 + 4257024) / 7)
    assert m["ncu_sm__throughput_avg_pct_of_peak_sustained_elapsed_mean"] == pytest.approx(
        (49.205701 + 49.403982 + 65.016741 + 64.864957 + 64.875028 + 8.438902 + 8.240496) / 7)
    assert m["ncu_missing_metrics"] == ["lts__t_bytes.sum"]
    assert "ncu_lts__t_bytes_sum_mean" not in m
    assert m["ncu_metric_units"] == {TIME: "ns", DRAM: "byte", SM: "%"}
    launch = m["ncu_launches"][2]
    assert launch["id"] == 2 and launch["kernel"].startswith("sm80_xmma_gemm")
    assert launch["metrics"] == {TIME: 62016, DRAM: 8458496, SM: 65.016741}
    assert (out / "raw.csv").read_text() == (FIXTURES / "h200" / "mm_raw.csv").read_text()
    assert m["ncu_artifact_dir"] == str(out)


def test_summarize_failed_export(tmp_path: Path, fake_ncu: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    (out / "profile.ncu-rep").write_text("FAIL")
    m = collector.summarize(out, options(), outcome())
    assert m["ncu_capture"] == "unparsed"
    assert m["ncu_capture_reason"] == \
        "`ncu --import` failed (exit 1): ==ERROR== Failed to open report file"
    assert "ncu_gpu_time_ms" not in m


def test_export_timeout_kills_the_whole_group(tmp_path: Path, fake_ncu: str):
    pid_file = tmp_path / "child.pid"
    report = tmp_path / "profile.ncu-rep"
    report.write_text(f"HANG {pid_file}")
    started = time.monotonic()
    reason = export_raw(fake_ncu, report, tmp_path / "raw.csv", timeout_s=2)
    assert reason == "`ncu --import` did not finish within 2 s"
    assert time.monotonic() - started < 30
    child = int(pid_file.read_text())
    for _ in range(50):          # the killed grandchild may take a moment to be reaped by init
        if not _alive(child):
            break
        time.sleep(0.1)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split()[2] != "Z"
    except OSError:
        return False


@pytest.mark.parametrize(("log", "state", "reason"), [
    ("ncu_err_nvgpuctrperm.log", "missing", "(ERR_NVGPUCTRPERM): run as root"),
    ("ncu_no_kernels.log", "empty", "ncu profiled no kernel launch"),
    ("ncu_library_error.log", "missing",
     "ncu wrote no report: Failed to initialize the profiler: LibraryNotLoaded"),
])
def test_no_report_reads_the_tool_log(tmp_path: Path, fake_ncu: str, log: str, state: str,
                                      reason: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    shutil.copy(FIXTURES / "written" / log, out / "ncu.log")
    m = collector.summarize(out, options(), outcome())
    assert m["ncu_capture"] == state
    assert reason in m["ncu_capture_reason"]


def test_permission_error_in_stderr_names_the_fix(tmp_path: Path, fake_ncu: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    stderr = tmp_path / "stderr.log"
    shutil.copy(FIXTURES / "written" / "ncu_err_nvgpuctrperm.log", stderr)
    reason = collector.summarize(out, options(), outcome(stderr))["ncu_capture_reason"]
    assert "NVreg_RestrictProfilingToAdminUsers=0" in reason
    assert "https://developer.nvidia.com/ERR_NVGPUCTRPERM" in reason


@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"launched": False}, "the payload never started"),
    ({"timed_out": True}, "the trial timed out before ncu wrote its report"),
    ({}, "ncu wrote no profile.ncu-rep (see ncu.log)"),
])
def test_no_report_and_no_log(tmp_path: Path, fake_ncu: str, kwargs: dict[str, bool], reason: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    m = collector.summarize(out, options(), outcome(**kwargs))
    assert (m["ncu_capture"], m["ncu_capture_reason"]) == ("missing", reason)


@pytest.mark.parametrize(("fixture", "state", "reason"), [
    ("raw_header_only.csv", "empty", "ncu profiled no kernel launch"),
    ("raw_no_time.csv", "unparsed", "the export has no gpu__time_duration.sum column"),
    ("raw_no_units.csv", "unparsed", "no units row after the header"),
])
def test_broken_exports_give_no_totals(tmp_path: Path, fake_ncu: str, fixture: str, state: str,
                                       reason: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    shutil.copy(FIXTURES / "written" / fixture, out / "profile.ncu-rep")
    m = collector.summarize(out, options(metrics=[DRAM]), outcome())
    assert m["ncu_capture"] == state
    assert reason in m["ncu_capture_reason"]
    assert "ncu_gpu_time_ms" not in m and "ncu_kernel_count" not in m


@pytest.mark.parametrize(("fixture", "skipped", "reason"), [
    ("raw_truncated.csv", 1, "data row 3 is not readable CSV"),
    ("raw_nan.csv", 2, "has no readable gpu__time_duration.sum"),
])
def test_damaged_exports_are_partial(tmp_path: Path, fake_ncu: str, fixture: str, skipped: int,
                                     reason: str):
    """Issue 12.1: the launches read are published as partial, never ok, with no count."""
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    shutil.copy(FIXTURES / "written" / fixture, out / "profile.ncu-rep")
    m = collector.summarize(out, options(metrics=[DRAM]), outcome())
    assert (m["ncu_capture"], m["ncu_skipped"]) == ("partial", skipped)
    assert reason in m["ncu_capture_reason"]
    assert "ncu_kernel_count" not in m and m["ncu_gpu_time_ms"] > 0


def test_negative_time_is_left_out_of_the_count_and_the_mean():
    """Issue 12.1: a negative time was counted as a launch and averaged in."""
    launches = [NcuLaunch(i, "k", {TIME: 5.0}) for i in range(4)]
    profile = NcuProfile(launches + [NcuLaunch(4, "k", {TIME: None})], {TIME: "ns"})
    m = profile_metrics(profile, [TIME])
    assert (m["ncu_capture"], m["ncu_skipped"]) == ("partial", 1)
    assert "ncu_kernel_count" not in m and m["ncu_kernels"][0]["calls"] == 4
    assert "ncu_gpu__time_duration_sum_mean" not in m


def test_a_launch_missing_from_the_export_is_caught_by_the_log():
    from aorta.collectors.ncu.collector import profiled_launches

    text = "".join(f'==PROF== Profiling "k" - {i}: 0%....50%....100% - 9 passes\n'
                   for i in range(3))
    assert profiled_launches(text) == 3 and profiled_launches("no lines") is None
    launches = [NcuLaunch(i, "k", {TIME: 5.0}) for i in range(2)]
    m = profile_metrics(NcuProfile(launches, {TIME: "ns"}), [TIME], profiled=3)
    assert (m["ncu_capture"], m["ncu_skipped"]) == ("partial", 1)
    assert "ncu.log reports 3 profiled launches, the export holds 2" in m["ncu_capture_reason"]


def test_nan_launch_keeps_the_record_but_no_mean(tmp_path: Path, fake_ncu: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    shutil.copy(FIXTURES / "written" / "raw_nan.csv", out / "profile.ncu-rep")
    m = collector.summarize(out, options(metrics=[DRAM]), outcome())
    assert [launch["metrics"][TIME] for launch in m["ncu_launches"]] == [1000, None, None]
    assert not any(key.endswith("_mean") for key in m)


def test_details_export_is_read_too(tmp_path: Path, fake_ncu: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    shutil.copy(FIXTURES / "written" / "details_gap.csv", out / "profile.ncu-rep")
    m = collector.summarize(out, options(metrics=[DRAM]), outcome())
    assert (m["ncu_capture"], m["ncu_kernel_count"]) == ("ok", 2)
    assert m["ncu_gpu_time_ms"] == pytest.approx(0.004)
    assert "ncu_dram__bytes_sum_mean" not in m      # launch 1 has no value: no honest mean


def test_launch_record_is_capped():
    launches = [NcuLaunch(i, "k", {TIME: 1.0}) for i in range(LAUNCH_RECORD_LIMIT + 5)]
    m = profile_metrics(NcuProfile(launches, {TIME: "ns"}), [TIME])
    assert m["ncu_kernel_count"] == LAUNCH_RECORD_LIMIT + 5
    assert len(m["ncu_launches"]) == LAUNCH_RECORD_LIMIT


def test_time_in_an_unknown_unit_is_not_published():
    m = profile_metrics(NcuProfile([NcuLaunch(0, "k", {TIME: 5.0})], {TIME: "Kfoo"}), [TIME])
    assert m["ncu_capture"] == "unparsed"
    assert "'Kfoo', not a unit of time" in m["ncu_capture_reason"]


def test_summarize_never_raises_on_a_directory_as_report(tmp_path: Path, fake_ncu: str):
    collector, out = wrapped_dir(tmp_path, fake_ncu)
    (out / "profile.ncu-rep").mkdir()
    m = collector.summarize(out, options(), outcome())
    assert m["ncu_capture"] == "missing"


# --- probe and resolved ----------------------------------------------------------------------

def test_probe_without_ncu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("NCU_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    cap = NcuCollector().probe()
    assert not cap.usable and "ncu not found" in cap.reason and "NCU_BIN" in cap.fix


def test_probe_reads_the_version(monkeypatch: pytest.MonkeyPatch, fake_ncu: str):
    monkeypatch.setenv("NCU_BIN", fake_ncu)
    cap = NcuCollector().probe()
    assert cap.version == "2025.3.1.0"
    assert cap.details["binary"] == fake_ncu
    if not gpu_present()[0]:
        assert not cap.usable and cap.reason.startswith("no NVIDIA GPU here")


def test_resolved_names_the_binary(tmp_path: Path, fake_ncu: str):
    resolved = NcuCollector().resolved(options(), ctx(tmp_path, {"NCU_BIN": fake_ncu}))
    assert resolved == {"ncu_binary": fake_ncu}
    assert NcuCollector().resolved(options(), ctx(tmp_path, {"PATH": ""})) == {}


@pytest.mark.parametrize(("params", "cap", "allowed", "words"), [
    ("RmProfilingAdminOnly: 0\n", "0", True, "every user"),
    ("ResmanDebugLevel: 4294967295\nRmProfilingAdminOnly: 1\n", "0000000000000000", False,
     "lacks CAP_SYS_ADMIN"),
    ("RmProfilingAdminOnly: 1\n", f"{1 << 21:016x}", True, "has CAP_SYS_ADMIN"),
    ("RmProfilingAdminOnly: 1\n", "000001ffffffffff", True, "has CAP_SYS_ADMIN"),
    (None, "0", None, "unknown until a run"),
    ("EnableMSI: 1\n", "0", None, "unknown until a run"),
    ("RmProfilingAdminOnly: 1\n", None, None, "unknown until a run"),
])
def test_counter_access(params: str | None, cap: str | None, allowed: bool | None, words: str):
    verdict, reason = counter_access(params, cap)
    assert verdict is allowed and words in reason


def test_wrap_is_pure(tmp_path: Path, fake_ncu: str):
    out = tmp_path / "never-created"
    NcuCollector().wrap(Launch(("./app",)), out, options(), ctx(tmp_path, {"NCU_BIN": fake_ncu}))
    assert not out.exists() and os.listdir(tmp_path) == ["bin"]


def test_unwritable_export_target_is_a_reason_not_a_crash(tmp_path: Path, fake_ncu: str):
    report = tmp_path / "profile.ncu-rep"
    report.write_text("x")
    reason = export_raw(fake_ncu, report, tmp_path / "no-such-dir" / "raw.csv")
    assert reason.startswith("`ncu --import` failed (exit None): could not write")
