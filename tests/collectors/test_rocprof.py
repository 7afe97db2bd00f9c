"""The rocprof collector: options, the argv it builds, finding rocprofv3, and every capture state.

rocprofv3 needs an AMD GPU, so the tool itself cannot run here: the binary is a stand-in script
(`fake_rocprofv3`) that reads the argv the way rocprofv3's argparse does, writes CSV files in
rocprofv3's naming, then runs the payload. The CSV readers meet real rocprofv3 output through
the fixtures.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.rocprof.collector import (RocprofCollector, RocprofOptions, RocprofUnavailableError,
                                      rocprof_version)
from aorta.base.errors import OptionError, SetupError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "rocprof"
GEMM = "void gemm_kernel<float, 128, 64>(float const*, float const*, float*, int, int, int)"
ROC = RocprofCollector()
RAN = TrialOutcome(exit_code=0, signal=None, timed_out=False, launched=True)

FAKE_ROCPROFV3 = '''\
#!{python}
"""Stands in for rocprofv3: parse its options, write CSV files like it, exec the payload."""
import argparse, os, sys
argv = sys.argv[1:]
if argv == ["--version"]:
    print("             version: 1.0.0")
    print("        rocm_version: 7.0.1")
    sys.exit(0)
cut = argv.index("--")
parser = argparse.ArgumentParser(allow_abbrev=False)
for flag in ("--output-directory", "--output-file", "--summary-output-file", "--summary-units",
             "--kernel-include-regex"):
    parser.add_argument(flag)
parser.add_argument("--output-format", nargs="+")
parser.add_argument("--pmc", nargs="*")
for flag in ("--kernel-trace", "--hip-trace", "--stats", "--summary"):
    parser.add_argument(flag, nargs="?", const=True)
args = parser.parse_args(argv[:cut])
stem = os.path.join(args.output_directory, args.output_file.replace("%pid%", str(os.getpid())))
os.makedirs(os.path.dirname(stem), exist_ok=True)
if "csv" in args.output_format and args.kernel_trace:
    with open(stem + "_kernel_trace.csv", "w") as fh:
        fh.write('"Kind","Agent_Id","Queue_Id","Thread_Id","Dispatch_Id","Kernel_Id",'
                 '"Kernel_Name","Correlation_Id","Start_Timestamp","End_Timestamp"\\n'
                 '"KERNEL_DISPATCH",4,1,9,1,2,"fake_kernel(int, int)",1,1000,3500\\n')
    if args.stats:
        with open(stem + "_kernel_stats.csv", "w") as fh:
            fh.write('"Name","Calls","TotalDurationNs"\\n"fake_kernel(int, int)",1,2500\\n')
os.execvp(argv[cut + 1], argv[cut + 1:])
'''


@pytest.fixture
def fake_rocprofv3(tmp_path: Path) -> Path:
    path = tmp_path / "bin" / "rocprofv3"
    path.parent.mkdir()
    path.write_text(FAKE_ROCPROFV3.format(python=sys.executable))
    path.chmod(0o755)
    return path


def ctx(tmp_path: Path, **env: str) -> TrialContext:
    return TrialContext("cell", 0, tmp_path, {"PATH": "/usr/bin:/bin", **env})


def opts(**raw: object) -> RocprofOptions:
    options = ROC.validate(raw)
    assert isinstance(options, RocprofOptions)
    return options


# --- options --------------------------------------------------------------------------------

def test_defaults_are_typed() -> None:
    options = opts()
    assert options.trace == ["kernel"] and options.output_format == ["csv"]
    assert options.stats is True and options.pmc is None
    assert options.kernel_include_regex is None and options.summary_units is None


def test_list_options_take_strings_and_lists() -> None:
    options = opts(trace="kernel, HIP  rccl,kernel", output_format=["CSV", "json"],
                   pmc="SQ_WAVES, TCC_HIT[0] GRBM_GUI_ACTIVE", stats="off",
                   summary_units=" MSEC ")
    assert options.trace == ["kernel", "hip", "rccl"]
    assert options.output_format == ["csv", "json"]
    assert options.pmc == ["SQ_WAVES", "TCC_HIT[0]", "GRBM_GUI_ACTIVE"]
    assert options.stats is False and options.summary_units == "msec"


@pytest.mark.parametrize("raw, message", [
    ({"trace": ["kernel", "cuda"]}, "collect.rocprof.trace[1]: Input should be 'kernel', 'hip', "
     "'hip_runtime', 'memory_copy', 'rccl', 'marker' or 'scratch', got 'cuda'"),
    ({"trace": " , "}, "collect.rocprof.trace: must name at least one domain (kernel, hip, "
     "hip_runtime, memory_copy, rccl, marker, scratch), got ' , '"),
    ({"output_format": "sqlite"}, "collect.rocprof.output_format[0]: Input should be 'csv', "
     "'json', 'pftrace', 'otf2' or 'rocpd', got 'sqlite'"),
    ({"output_format": []}, "collect.rocprof.output_format: must name at least one format"),
    ({"stats": "maybe"}, "collect.rocprof.stats: Input should be a valid boolean"),
    ({"pmc": "SQ_WAVES --kernel-trace"}, "collect.rocprof.pmc: '--kernel-trace' is not a "
     "counter name"),
    ({"pmc": ""}, "collect.rocprof.pmc: must name at least one counter (leave the key out"),
    ({"kernel_include_regex": "gemm(float"}, "collect.rocprof.kernel_include_regex: is not a "
     "valid regular expression: missing ), unterminated subpattern at position 4, got 'gemm(float'"),
    ({"kernel_include_regex": "  "}, "collect.rocprof.kernel_include_regex: must not be empty"),
    ({"summary_units": "min"}, "collect.rocprof.summary_units: Input should be 'sec', 'msec', "
     "'usec' or 'nsec', got 'min'"),
    ({"output": "csv"}, "collect.rocprof.output: unknown key; allowed: kernel_include_regex, "
     "output_format, pmc, stats, summary_units, trace"),
])
def test_every_option_refuses_bad_values_by_name(raw: dict[str, object], message: str) -> None:
    with pytest.raises(OptionError) as err:
        ROC.validate(raw)
    assert message in str(err.value)


def test_options_must_be_a_mapping() -> None:
    with pytest.raises(OptionError, match="collect.rocprof: options must be a mapping"):
        ROC.validate(["kernel"])  # type: ignore[arg-type]


# --- argv -----------------------------------------------------------------------------------

def test_default_argv_exactly(tmp_path: Path, fake_rocprofv3: Path) -> None:
    out = tmp_path / "rocprof"
    launch = ROC.wrap(Launch(("./app", "-n", "3")), out, opts(),
                      ctx(tmp_path, ROCPROF_BIN=str(fake_rocprofv3)))
    assert launch.argv == (
        str(fake_rocprofv3), "--output-directory", str(out), "--output-file", "aorta_%pid%",
        "--output-format", "csv", "--kernel-trace", "--stats", "--summary",
        "--summary-output-file", "rocprof_summary", "--", "./app", "-n", "3")
    assert dict(launch.env) == {} and launch.unset == frozenset()


def test_full_argv_exactly_pmc_last(tmp_path: Path, fake_rocprofv3: Path) -> None:
    out = tmp_path / "rocprof"
    options = opts(trace="kernel hip hip_runtime memory_copy rccl marker scratch",
                   output_format="csv pftrace", stats=False, pmc="SQ_WAVES GRBM_COUNT",
                   kernel_include_regex="^gemm", summary_units="usec")
    launch = ROC.wrap(Launch(("python3", "train.py"), {"A": "1"}), out, options,
                      ctx(tmp_path, ROCPROF_BIN=str(fake_rocprofv3)))
    assert launch.argv == (
        str(fake_rocprofv3), "--output-directory", str(out), "--output-file", "aorta_%pid%",
        "--output-format", "csv", "pftrace", "--kernel-trace", "--hip-trace",
        "--hip-runtime-trace", "--memory-copy-trace", "--rccl-trace", "--marker-trace",
        "--scratch-memory-trace", "--summary", "--summary-output-file", "rocprof_summary",
        "--summary-units", "usec", "--kernel-include-regex", "^gemm",
        "--pmc", "SQ_WAVES", "GRBM_COUNT", "--", "python3", "train.py")
    assert dict(launch.env) == {"A": "1"}


def test_only_long_flags(tmp_path: Path, fake_rocprofv3: Path) -> None:
    options = opts(trace="kernel hip", pmc="SQ_WAVES", kernel_include_regex="x",
                   summary_units="sec")
    argv = ROC.wrap(Launch(("app",)), tmp_path, options,
                    ctx(tmp_path, ROCPROF_BIN=str(fake_rocprofv3))).argv
    flags = argv[1:argv.index("--")]
    assert [f for f in flags if f.startswith("-") and not f.startswith("--")] == []


def test_binary_comes_from_the_trial_env_not_os_environ(tmp_path: Path, fake_rocprofv3: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCPROF_BIN", "/nonexistent/rocprofv3")
    argv = ROC.wrap(Launch(("app",)), tmp_path, opts(),
                    ctx(tmp_path, ROCPROF_BIN=str(fake_rocprofv3))).argv
    assert argv[0] == str(fake_rocprofv3)


def test_bare_name_and_path_lookup_use_the_trial_path(tmp_path: Path,
                                                      fake_rocprofv3: Path) -> None:
    bin_dir = str(fake_rocprofv3.parent)
    env = {"PATH": bin_dir, "ROCPROF_BIN": "rocprofv3"}
    by_name = ROC.wrap(Launch(("app",)), tmp_path, opts(), TrialContext("c", 0, tmp_path, env))
    on_path = ROC.wrap(Launch(("app",)), tmp_path, opts(),
                       TrialContext("c", 0, tmp_path, {"PATH": bin_dir}))
    assert by_name.argv[0] == on_path.argv[0] == str(fake_rocprofv3)


def test_home_relative_binary_is_expanded(tmp_path: Path, fake_rocprofv3: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(fake_rocprofv3.parent.parent))
    argv = ROC.wrap(Launch(("app",)), tmp_path, opts(),
                    ctx(tmp_path, ROCPROF_BIN="~/bin/rocprofv3")).argv
    assert argv[0] == str(fake_rocprofv3)


def test_missing_binary_names_both_ways(tmp_path: Path) -> None:
    with pytest.raises(RocprofUnavailableError) as err:
        ROC.wrap(Launch(("app",)), tmp_path, opts(), ctx(tmp_path, PATH=str(tmp_path)))
    message = str(err.value)
    assert "$ROCPROF_BIN is not set" in message and "'rocprofv3' is not on PATH" in message
    assert "remove rocprof from collect" in message
    assert isinstance(err.value, SetupError)


def test_rocprof_bin_must_be_an_executable_file(tmp_path: Path) -> None:
    not_executable = tmp_path / "rocprofv3"
    not_executable.write_text("#!/bin/sh\n")
    with pytest.raises(RocprofUnavailableError, match=r"\$ROCPROF_BIN='.*rocprofv3' is not an "
                                                      "executable file"):
        ROC.wrap(Launch(("app",)), tmp_path, opts(),
                 ctx(tmp_path, ROCPROF_BIN=str(not_executable)))


def test_empty_command_is_refused(tmp_path: Path, fake_rocprofv3: Path) -> None:
    with pytest.raises(SetupError, match="the command is empty"):
        ROC.wrap(Launch(()), tmp_path, opts(), ctx(tmp_path, ROCPROF_BIN=str(fake_rocprofv3)))


def test_contract_attributes() -> None:
    assert ROC.wrap_rank == 10 and ROC.claims(opts()) == frozenset({"hsa-queue"})


@pytest.mark.parametrize("proton, refused", [
    ({"backend": "auto"}, True), ({"backend": "roctracer", "mode": "env"}, True),
    ({"backend": "rocprofiler"}, True), ({"backend": "instrumentation"}, False)])
def test_only_proton_instrumentation_shares_a_trial(proton: dict[str, str],
                                                    refused: bool) -> None:
    pytest.importorskip("aorta.collectors.proton.collector")
    from aorta.collectors.conflicts import check_conflicts
    from aorta.collectors.registry import get
    from aorta.base.errors import ConflictError

    selected = {"rocprof": opts(), "proton": get("proton").validate(proton)}
    if refused:
        with pytest.raises(ConflictError, match="rocprof and proton .* HSA queue"):
            check_conflicts(selected)
    else:
        check_conflicts(selected)


def test_wrapped_command_runs_and_is_summarised(tmp_path: Path, fake_rocprofv3: Path) -> None:
    out = tmp_path / "rocprof"
    out.mkdir()
    launch = ROC.wrap(Launch((sys.executable, "-c", "print('payload ran')")), out, opts(),
                      ctx(tmp_path, ROCPROF_BIN=str(fake_rocprofv3)))
    done = subprocess.run(launch.argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and "payload ran" in done.stdout
    metrics = ROC.summarize(out, opts(), RAN)
    assert metrics["rocprof_capture"] == "ok" and metrics["rocprof_source"] == "stats"
    assert metrics["rocprof_gpu_time_ms"] == pytest.approx(0.0025)
    assert metrics["rocprof_kernel_count"] == 1
    assert list(out.glob("aorta_*_kernel_stats.csv"))       # %pid% was filled in


# --- summarize ------------------------------------------------------------------------------

def capture(tmp_path: Path, *fixture_dirs: str) -> Path:
    out = tmp_path / "rocprof"
    out.mkdir()
    for name in fixture_dirs:
        shutil.copytree(FIXTURES / name, out, dirs_exist_ok=True)
    return out


def test_stats_are_preferred(tmp_path: Path) -> None:
    metrics = ROC.summarize(capture(tmp_path, "stats", "rocm7"), opts(), RAN)
    assert metrics["rocprof_capture"] == "ok" and metrics["rocprof_source"] == "stats"
    assert "rocprof_csv_layout" not in metrics
    assert metrics["rocprof_gpu_time_ms"] == pytest.approx(0.575)
    assert metrics["rocprof_kernel_count"] == 7
    assert metrics["rocprof_top_kernels"][0] == GEMM
    assert metrics["rocprof_top_kernel_ms"] == pytest.approx(0.53)
    assert metrics["rocprof_artifact_dir"] == str(tmp_path / "rocprof")
    assert [row["calls"] for row in metrics["rocprof_kernels"]] == [4, 2, 1]


@pytest.mark.parametrize("layout", ["rocm6", "rocm7"])
def test_trace_alone_gives_the_same_numbers(tmp_path: Path, layout: str) -> None:
    metrics = ROC.summarize(capture(tmp_path, layout), opts(), RAN)
    assert metrics["rocprof_source"] == "trace" and metrics["rocprof_csv_layout"] == layout
    assert metrics["rocprof_gpu_time_ms"] == pytest.approx(0.575)
    assert metrics["rocprof_kernel_count"] == 7


@pytest.mark.parametrize("folder", ["stats-truncated-trace-ok", "stats-renamed-columns-trace-ok",
                                    "stats-header-only-trace-ok"])
def test_unusable_stats_fall_back_to_the_trace(tmp_path: Path, folder: str) -> None:
    metrics = ROC.summarize(capture(tmp_path, folder), opts(), RAN)
    assert metrics["rocprof_capture"] == "ok" and metrics["rocprof_source"] == "trace"
    assert metrics["rocprof_kernel_count"] == 7


def test_files_of_every_process_are_summed(tmp_path: Path) -> None:
    metrics = ROC.summarize(capture(tmp_path, "no-output-file"), opts(), RAN)
    assert metrics["rocprof_source"] == "stats" and metrics["rocprof_kernel_count"] == 7
    assert metrics["rocprof_gpu_time_ms"] == pytest.approx(0.575)


def test_real_jacobi_stats(tmp_path: Path) -> None:
    metrics = ROC.summarize(capture(tmp_path, "jacobi-stats"), opts(), RAN)
    assert metrics["rocprof_gpu_time_ms"] == pytest.approx(1241.356755)
    assert metrics["rocprof_top_kernels"][0] == "JacobiIterationKernel"


def test_untrusted_counts_are_omitted(tmp_path: Path) -> None:
    out = tmp_path / "rocprof"
    out.mkdir()
    shutil.copy(FIXTURES / "broken" / "stats_untrusted_calls.csv", out / "a_kernel_stats.csv")
    metrics = ROC.summarize(out, opts(), RAN)
    assert metrics["rocprof_capture"] == "partial" and "rocprof_kernel_count" not in metrics
    assert metrics["rocprof_untrusted_counts"] == 3 and metrics["rocprof_skipped"] == 3
    assert "Calls is '-4'" in metrics["rocprof_capture_reason"]
    assert metrics["rocprof_gpu_time_ms"] == pytest.approx(0.575)


def test_skipped_rows_are_reported(tmp_path: Path) -> None:
    out = tmp_path / "rocprof"
    out.mkdir()
    shutil.copy(FIXTURES / "broken" / "trace_short_row.csv", out / "a_kernel_trace.csv")
    metrics = ROC.summarize(out, opts(), RAN)
    assert metrics["rocprof_capture"] == "partial" and metrics["rocprof_skipped"] == 1
    assert "rocprof_kernel_count" not in metrics and "rocprof_gpu_time_ms" in metrics
    assert "header" in metrics["rocprof_capture_reason"]


def test_no_files_after_a_clean_run_is_empty(tmp_path: Path) -> None:
    metrics = ROC.summarize(capture(tmp_path), opts(), RAN)
    assert metrics["rocprof_capture"] == "empty"
    assert metrics["rocprof_capture_reason"] == ("rocprofv3 wrote no files: the payload "
                                                 "dispatched no GPU work")
    assert "rocprof_gpu_time_ms" not in metrics


@pytest.mark.parametrize("outcome, reason", [
    (TrialOutcome(None, None, False, launched=False), "the payload never started"),
    (TrialOutcome(None, 9, True, launched=True), "the trial timed out before rocprofv3 wrote"),
    (TrialOutcome(None, 11, False, launched=True), "killed by signal 11"),
])
def test_no_files_when_the_payload_did_not_finish_is_missing(tmp_path: Path,
                                                            outcome: TrialOutcome,
                                                            reason: str) -> None:
    metrics = ROC.summarize(capture(tmp_path), opts(), outcome)
    assert metrics["rocprof_capture"] == "missing" and reason in metrics["rocprof_capture_reason"]


def test_rocprofv3_fatal_error_is_the_reason(tmp_path: Path) -> None:
    stderr = tmp_path / "stderr.log"
    stderr.write_text("W20261202 simple_timer...\nFatal error: Invalid counter: SQ_WAVEZ\n")
    outcome = TrialOutcome(1, None, False, launched=True, stderr_path=stderr)
    metrics = ROC.summarize(capture(tmp_path), opts(), outcome)
    assert metrics["rocprof_capture"] == "missing"
    assert metrics["rocprof_capture_reason"] == "rocprofv3 failed: Invalid counter: SQ_WAVEZ"


def test_header_only_files_are_empty(tmp_path: Path) -> None:
    metrics = ROC.summarize(capture(tmp_path, "header-only"), opts(), RAN)
    assert metrics["rocprof_capture"] == "empty"
    assert "no kernel dispatch" in metrics["rocprof_capture_reason"]


def test_without_csv_the_capture_says_why_it_has_no_numbers(tmp_path: Path) -> None:
    out = capture(tmp_path)
    (out / "gpu-node-1").mkdir()
    (out / "gpu-node-1" / "4242_results.db").write_bytes(b"SQLite format 3\x00")
    metrics = ROC.summarize(out, opts(output_format="rocpd"), RAN)
    assert metrics["rocprof_capture"] == "unparsed"
    assert "output_format rocpd writes no CSV" in metrics["rocprof_capture_reason"]
    assert "rocpd convert" in metrics["rocprof_capture_reason"]


def test_without_kernel_tracing_the_capture_says_why(tmp_path: Path) -> None:
    out = capture(tmp_path)
    (out / "aorta_1_hip_api_stats.csv").write_text('"Name","Calls","TotalDurationNs"\n')
    metrics = ROC.summarize(out, opts(trace="hip"), RAN)
    assert metrics["rocprof_capture"] == "unparsed"
    assert "trace hip records no kernel dispatch" in metrics["rocprof_capture_reason"]


def test_unusable_files_are_unparsed_with_each_file_named(tmp_path: Path) -> None:
    out = capture(tmp_path)
    shutil.copy(FIXTURES / "broken" / "trace_renamed_columns.csv", out / "a_kernel_trace.csv")
    shutil.copy(FIXTURES / "broken" / "trace_binary_garbage.csv", out / "b_kernel_trace.csv")
    metrics = ROC.summarize(out, opts(), RAN)
    reason = metrics["rocprof_capture_reason"]
    assert metrics["rocprof_capture"] == "unparsed"
    assert "a_kernel_trace.csv: no column Kernel_Name" in reason
    assert "b_kernel_trace.csv: 9 data rows, none usable" in reason
    assert "9 rows left out" in reason


def test_overflowing_total_is_unparsed(tmp_path: Path) -> None:
    out = capture(tmp_path)
    shutil.copy(FIXTURES / "broken" / "trace_overflow.csv", out / "a_kernel_trace.csv")
    metrics = ROC.summarize(out, opts(), RAN)
    assert metrics["rocprof_capture"] == "unparsed"
    assert "overflows" in metrics["rocprof_capture_reason"]
    assert "rocprof_gpu_time_ms" not in metrics


def test_symlinked_artifact_dir_is_refused(tmp_path: Path) -> None:
    real = capture(tmp_path, "stats")
    link = tmp_path / "linked"
    link.symlink_to(real, target_is_directory=True)
    metrics = ROC.summarize(link, opts(), RAN)
    assert metrics["rocprof_capture"] == "unparsed"
    assert "is a symbolic link" in metrics["rocprof_capture_reason"]
    assert "rocprof_gpu_time_ms" not in metrics


def test_symlinks_inside_are_not_followed(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(FIXTURES / "stats", elsewhere)
    out = capture(tmp_path)
    (out / "aorta_1_kernel_stats.csv").symlink_to(elsewhere / "aorta_4242_kernel_stats.csv")
    (out / "host").symlink_to(elsewhere, target_is_directory=True)
    metrics = ROC.summarize(out, opts(), RAN)
    assert metrics["rocprof_capture"] == "unparsed"
    assert "only links or special files here" in metrics["rocprof_capture_reason"]


def test_missing_artifact_dir(tmp_path: Path) -> None:
    metrics = ROC.summarize(tmp_path / "absent", opts(), RAN)
    assert metrics["rocprof_capture"] == "missing"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file_is_named(tmp_path: Path) -> None:
    out = capture(tmp_path)
    path = out / "a_kernel_stats.csv"
    shutil.copy(FIXTURES / "stats" / "aorta_4242_kernel_stats.csv", path)
    path.chmod(0)
    try:
        metrics = ROC.summarize(out, opts(), RAN)
    finally:
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert metrics["rocprof_capture"] == "unparsed"
    assert "a_kernel_stats.csv: unreadable" in metrics["rocprof_capture_reason"]


def test_unreadable_file_does_not_hide_the_others(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """As root every file is readable, so the read error is raised by hand here. The stats
    are then not whole, and the whole trace gives the figures."""
    import aorta.collectors.rocprof.figures as module

    real = module.read_stats

    def read_stats(path: Path, table: object) -> object:
        if path.name.startswith("4242"):
            raise PermissionError(13, "Permission denied")
        return real(path, table)  # type: ignore[arg-type]

    monkeypatch.setattr(module, "read_stats", read_stats)
    metrics = ROC.summarize(capture(tmp_path, "no-output-file"), opts(), RAN)
    assert metrics["rocprof_capture"] == "ok" and metrics["rocprof_kernel_count"] == 7
    assert metrics["rocprof_source"] == "trace"
    assert "4242_kernel_stats.csv: unreadable" in metrics["rocprof_stats_note"]


# --- probe ----------------------------------------------------------------------------------

def test_probe_reads_the_version_and_needs_kfd(fake_rocprofv3: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROCPROF_BIN", str(fake_rocprofv3))
    capability = ROC.probe()
    assert capability.version == "1.0.0 (ROCm 7.0.1)"
    assert capability.details["binary"] == str(fake_rocprofv3)
    if Path("/dev/kfd").exists():
        assert capability.usable
    else:
        assert not capability.usable and "/dev/kfd is missing" in capability.reason
        assert "--device /dev/kfd" in capability.fix


def test_probe_without_binary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROCPROF_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    capability = ROC.probe()
    assert not capability.usable and capability.version is None
    assert "ROCPROF_BIN" in capability.reason and "PATH" in capability.reason


def test_version_of_a_binary_that_fails(tmp_path: Path) -> None:
    broken = tmp_path / "rocprofv3"
    broken.write_text(textwrap.dedent("""\
        #!/bin/sh
        echo "Fatal error: no ROCm" >&2
        exit 1
        """))
    broken.chmod(0o755)
    assert rocprof_version(str(broken)) is None


@pytest.mark.parametrize(("outcome", "why"), [
    (TrialOutcome(None, 9, True, launched=True), "timed out and was killed"),
    (TrialOutcome(None, 15, False, launched=True), "killed by signal 15"),
])
def test_files_of_a_killed_payload_are_partial(tmp_path: Path, outcome: TrialOutcome,
                                               why: str) -> None:
    """A file cut at a line break reads like a whole one: the trial's end says it may be cut."""
    metrics = ROC.summarize(capture(tmp_path, "stats"), opts(), outcome)
    assert (metrics["rocprof_capture"], metrics["rocprof_skipped"]) == ("partial", 1)
    assert why in metrics["rocprof_capture_reason"]
    assert metrics["rocprof_capture_reason"].endswith("figures cover only the rows read")
    assert "rocprof_kernel_count" not in metrics and metrics["rocprof_gpu_time_ms"] > 0
