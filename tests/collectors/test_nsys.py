"""The nsys collector on the CPU: options, the argv it builds, export ability, and summarize.

Nsight Systems cannot run here, so `nsys stats` is a stand-in script that behaves as nsys does
for the report file it is given: the report's first line picks the behaviour (a current release,
a pre-2023 release that only knows `gpukernsum`, a report without kernels, a broken tool).
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.nsys.collector import (NsysCollector, NsysOptions, find_qdstrm_importer, nsys_argv,
                                   run_stats)
from aorta.collectors.binaries import gpu_present
from aorta.collectors.registry import get
from aorta.base.errors import OptionError, SetupError

WRITTEN = Path(__file__).resolve().parents[1] / "fixtures" / "nsys" / "written"

FAKE_NSYS = f"""#!{sys.executable}
import json, shutil, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("NVIDIA Nsight Systems version 2024.6.2.225-246235244400v0")
    sys.exit(0)
if args[:1] != ["stats"]:
    sys.exit(2)
opts = dict(a[2:].split("=", 1) for a in args[1:-1])
plan = json.load(open(args[-1]))
name = opts["report"]
print("Generating SQLite file report.sqlite from " + args[-1])
if plan["mode"] == "skip":
    print("SKIPPED: report.sqlite does not contain CUDA kernel data.")
    sys.exit(0)
if plan["mode"] == "old" and name == "cuda_gpu_kern_sum" or plan["mode"] == "broken":
    print("ERROR: Report '" + name + "' could not be found.", file=sys.stderr)
    sys.exit(1)
assert opts["format"] == "csv"
shutil.copy(plan["csv"], opts["output"] + "_" + name + ".csv")
"""


@pytest.fixture
def fake_nsys(tmp_path: Path) -> str:
    """An nsys in a full install layout: target-linux-x64/nsys beside host-linux-x64/."""
    root = tmp_path / "nsight-systems" / "2024.6.2"
    binary = root / "target-linux-x64" / "nsys"
    binary.parent.mkdir(parents=True)
    binary.write_text(FAKE_NSYS)
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    importer = root / "host-linux-x64" / "QdstrmImporter"
    importer.parent.mkdir()
    importer.write_text("#!/bin/sh\n")
    importer.chmod(0o755)
    return str(binary)


def options(**raw: Any) -> NsysOptions:
    result = NsysCollector().validate(raw)
    assert isinstance(result, NsysOptions)
    return result


def ctx(trial_dir: Path, env: dict[str, str]) -> TrialContext:
    return TrialContext("c", 0, trial_dir, env)


def outcome(stderr: Path | None = None, launched: bool = True,
            timed_out: bool = False) -> TrialOutcome:
    return TrialOutcome(0, None, timed_out, launched, stderr, dict(TRIAL_ENV))


# The environment of the trial `wrapped_dir` set up: summarize finds the same tool with it.
TRIAL_ENV: dict[str, str] = {}


# --- options ---------------------------------------------------------------------------------

def test_defaults():
    opts = options()
    assert (opts.trace, opts.sample) == (["cuda", "nvtx"], "none")
    assert (opts.cuda_graph_trace, opts.capture_range, opts.nvtx_capture) == (None, None, None)


def test_trace_from_a_string_deduplicated():
    assert options(trace="cuda, osrt cublas,cuda").trace == ["cuda", "osrt", "cublas"]


@pytest.mark.parametrize(("raw", "message"), [
    ({"trace": "nvtx,osrt"}, "collect.nsys.trace: must include cuda"),
    ({"trace": ["cuda", "dx12"]}, "collect.nsys.trace[1]: Input should be 'cuda', 'nvtx'"),
    ({"sample": "cpu"},
     "collect.nsys.sample: Input should be 'none', 'process-tree' or 'system-wide'"),
    ({"cuda_graph_trace": "kernel"},
     "collect.nsys.cuda_graph_trace: Input should be 'graph' or 'node'"),
    ({"capture_range": "hotkey"}, "collect.nsys.capture_range: Input should be 'none'"),
    ({"capture_range": "nvtx"}, "collect.nsys: nvtx_capture is required with capture_range: nvtx"),
    ({"nvtx_capture": "step@d"}, "collect.nsys: nvtx_capture is required with capture_range: nvtx"),
    ({"extra_args": ["--stats=true"]},
     "collect.nsys.extra_args: unknown key; allowed: capture_range"),
])
def test_bad_options(raw: dict[str, Any], message: str):
    with pytest.raises(OptionError) as err:
        NsysCollector().validate(raw)
    assert str(err.value).startswith(message), str(err.value)


# --- argv ------------------------------------------------------------------------------------

def test_default_argv():
    assert nsys_argv("/opt/nsys", options(), Path("/r/t/nsys")) == [
        "/opt/nsys", "profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none",
        "--output=/r/t/nsys/report", "--force-overwrite=true", "--"]


def test_every_option_in_argv():
    opts = options(trace=["cuda", "osrt"], sample="process-tree", cuda_graph_trace="node",
                   capture_range="nvtx", nvtx_capture="step@train")
    assert nsys_argv("/opt/nsys", opts, Path("/o")) == [
        "/opt/nsys", "profile", "--trace=cuda,osrt", "--sample=process-tree", "--cpuctxsw=none",
        "--output=/o/report", "--force-overwrite=true", "--cuda-graph-trace=node",
        "--capture-range=nvtx", "--nvtx-capture=step@train", "--"]


def test_wrap_puts_the_command_after_the_separator(tmp_path: Path, fake_nsys: str):
    launch = Launch(("python3", "-u", "train.py", "--steps", "3"), {"X": "1"})
    wrapped = NsysCollector().wrap(launch, tmp_path / "nsys", options(),
                                   ctx(tmp_path, {"NSYS_BIN": fake_nsys}))
    assert wrapped.argv[:2] == (fake_nsys, "profile")
    separator = wrapped.argv.index("--")
    assert wrapped.argv[separator + 1:] == launch.argv
    assert wrapped.env == {"X": "1"}


def test_missing_nsys_names_both_ways(tmp_path: Path):
    with pytest.raises(SetupError) as err:
        NsysCollector().wrap(Launch(("./app",)), tmp_path, options(), ctx(tmp_path, {"PATH": ""}))
    assert "$NSYS_BIN is not set and 'nsys' is not on PATH" in str(err.value)


def test_registered_with_rank_and_claim():
    collector = get("nsys")
    assert isinstance(collector, NsysCollector) and collector.wrap_rank == 20
    assert collector.claims(options()) == {"cupti"}


# --- export ability --------------------------------------------------------------------------

def test_importer_found_next_to_a_full_install(fake_nsys: str):
    found = find_qdstrm_importer(Path(fake_nsys))
    assert found is not None and found.parts[-2:] == ("host-linux-x64", "QdstrmImporter")


def test_importer_found_through_a_symlink_and_a_toolkit_layout(tmp_path: Path, fake_nsys: str):
    link = tmp_path / "bin-nsys"
    link.symlink_to(fake_nsys)
    assert find_qdstrm_importer(link) is not None
    toolkit = tmp_path / "cuda-13.0"
    (toolkit / "bin").mkdir(parents=True)
    shutil.copy(fake_nsys, toolkit / "bin" / "nsys")
    host = toolkit / "nsight-systems-2025.3.2" / "host-linux-x64"
    host.mkdir(parents=True)
    (host / "QdstrmImporter").write_text("")
    (host / "QdstrmImporter").chmod(0o755)
    assert find_qdstrm_importer(toolkit / "bin" / "nsys") == host / "QdstrmImporter"


def test_no_importer_inside_the_nsight_compute_folder(tmp_path: Path):
    # The layout of the H200 machine: nsys bundled in Nsight Compute, with no host folder.
    binary = tmp_path / "nsight-compute" / "2025.3.1" / "host" / "target-linux-x64" / "nsys"
    binary.parent.mkdir(parents=True)
    binary.write_text("")
    assert find_qdstrm_importer(binary) is None


def test_probe_says_why_nsys_cannot_export(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                           fake_nsys: str):
    lonely = tmp_path / "lonely" / "nsys"
    lonely.parent.mkdir()
    shutil.copy(fake_nsys, lonely)
    monkeypatch.setenv("NSYS_BIN", str(lonely))
    cap = NsysCollector().probe()
    assert not cap.usable and cap.version == "2024.6.2.225-246235244400v0"
    assert "no QdstrmImporter next to it" in cap.reason and ".qdstrm" in cap.reason
    assert "full Nsight Systems package" in cap.fix


def test_probe_with_an_importer(monkeypatch: pytest.MonkeyPatch, fake_nsys: str):
    monkeypatch.setenv("NSYS_BIN", fake_nsys)
    cap = NsysCollector().probe()
    assert cap.details["importer"].endswith("host-linux-x64/QdstrmImporter")
    if not gpu_present()[0]:
        assert not cap.usable and cap.reason.startswith("no NVIDIA GPU here")
    else:
        assert cap.usable


def test_probe_without_nsys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.delenv("NSYS_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    cap = NsysCollector().probe()
    assert not cap.usable and "nsys not found" in cap.reason


# --- summarize -------------------------------------------------------------------------------

def wrapped_dir(tmp_path: Path, binary: str) -> tuple[NsysCollector, Path]:
    collector, out = NsysCollector(), tmp_path / "trial" / "nsys"
    out.mkdir(parents=True)
    TRIAL_ENV.clear()
    TRIAL_ENV["NSYS_BIN"] = binary
    collector.wrap(Launch(("./app",)), out, options(), ctx(out.parent, TRIAL_ENV))
    return collector, out


def write_report(out: Path, mode: str, csv: str = "kern_cuda_gpu_kern_sum.csv",
                 name: str = "report.nsys-rep") -> None:
    (out / name).write_text(json.dumps({"mode": mode, "csv": str(WRITTEN / csv)}))


def test_summarize_a_current_release(tmp_path: Path, fake_nsys: str):
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    write_report(out, "new")
    m = collector.summarize(out, options(), outcome())
    assert m["nsys_capture"] == "ok", m.get("nsys_capture_reason")
    assert m["nsys_stats_report"] == "cuda_gpu_kern_sum"
    assert m["nsys_kernel_count"] == 8
    assert m["nsys_gpu_time_ms"] == pytest.approx(0.213664)
    assert m["nsys_top_kernels"][-1] == 'kernel_with_"quotes", and commas'
    assert (out / "kern_cuda_gpu_kern_sum.csv").is_file()
    assert "--report=cuda_gpu_kern_sum (exit 0)" in (out / "stats.log").read_text()


def test_summarize_falls_back_to_gpukernsum(tmp_path: Path, fake_nsys: str):
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    write_report(out, "old", csv="kern_gpukernsum.csv", name="report.qdrep")
    m = collector.summarize(out, options(), outcome())
    assert (m["nsys_capture"], m["nsys_stats_report"]) == ("ok", "gpukernsum")
    assert m["nsys_kernel_count"] == 8
    log = (out / "stats.log").read_text()
    assert "could not be found" in log and "--report=gpukernsum (exit 0)" in log


def test_report_without_kernels_is_empty(tmp_path: Path, fake_nsys: str):
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    write_report(out, "skip")
    m = collector.summarize(out, options(), outcome())
    assert m["nsys_capture"] == "empty"
    assert "does not contain CUDA kernel data" in m["nsys_capture_reason"]


def test_stats_that_fail_under_both_names(tmp_path: Path, fake_nsys: str):
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    write_report(out, "broken")
    m = collector.summarize(out, options(), outcome())
    assert m["nsys_capture"] == "unparsed"
    assert "wrote no kernel summary under either report name" in m["nsys_capture_reason"]


@pytest.mark.parametrize(("csv", "state", "reason"), [
    ("header_only.csv", "empty", "nsys recorded no CUDA kernel"),
    ("no_total.csv", "unparsed", "holds no kernel summary table"),
    ("bytes_total.csv", "unparsed", "not a unit of time"),
])
def test_broken_summaries_give_no_totals(tmp_path: Path, fake_nsys: str, csv: str, state: str,
                                         reason: str):
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    write_report(out, "new", csv=csv)
    m = collector.summarize(out, options(), outcome())
    assert m["nsys_capture"] == state and reason in m["nsys_capture_reason"]
    assert "nsys_gpu_time_ms" not in m


def test_a_cut_summary_is_partial(tmp_path: Path, fake_nsys: str):
    """Issue 12.1: the rows read are published as partial, with no kernel count."""
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    write_report(out, "new", csv="truncated.csv")
    m = collector.summarize(out, options(), outcome())
    assert (m["nsys_capture"], m["nsys_skipped"]) == ("partial", 1)
    assert "kern_cuda_gpu_kern_sum.csv: 1 row left out" in m["nsys_capture_reason"]
    assert "nsys_kernel_count" not in m and m["nsys_gpu_time_ms"] > 0


def test_only_a_qdstrm_without_importer_is_unparsed_not_a_crash(tmp_path: Path, fake_nsys: str):
    lonely = tmp_path / "nsight-compute" / "host" / "target-linux-x64" / "nsys"
    lonely.parent.mkdir(parents=True)
    shutil.copy(fake_nsys, lonely)
    collector, out = wrapped_dir(tmp_path, str(lonely))
    (out / "report.qdstrm").write_bytes(b"\x00QDSTRM")
    m = collector.summarize(out, options(), outcome())
    assert m["nsys_capture"] == "unparsed"
    assert m["nsys_capture_reason"].startswith(
        "nsys wrote only report.qdstrm and could not turn it into a report: no QdstrmImporter")


def test_only_a_qdstrm_with_an_importer(tmp_path: Path, fake_nsys: str):
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    (out / "report.qdstrm").write_bytes(b"")
    m = collector.summarize(out, options(), outcome())
    assert m["nsys_capture"] == "unparsed"
    assert "conversion failed or was cut short" in m["nsys_capture_reason"]


@pytest.mark.parametrize(("kwargs", "reason"), [
    ({"launched": False}, "the payload never started"),
    ({"timed_out": True}, "the trial timed out before nsys wrote its report"),
])
def test_nothing_written(tmp_path: Path, fake_nsys: str, kwargs: dict[str, bool], reason: str):
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    m = collector.summarize(out, options(), outcome(**kwargs))
    assert (m["nsys_capture"], m["nsys_capture_reason"]) == ("missing", reason)


def test_nothing_written_quotes_stderr(tmp_path: Path, fake_nsys: str):
    collector, out = wrapped_dir(tmp_path, fake_nsys)
    stderr = tmp_path / "stderr.log"
    stderr.write_text("payload output\nError: failed to start the CUDA trace.\n")
    m = collector.summarize(out, options(), outcome(stderr))
    assert m["nsys_capture_reason"] == \
        "nsys wrote no report (stderr ends: Error: failed to start the CUDA trace.)"


def test_stats_timeout(tmp_path: Path):
    slow = tmp_path / "nsys"
    slow.write_text(f"#!{sys.executable}\nimport time\ntime.sleep(60)\n")
    slow.chmod(0o755)
    report = tmp_path / "report.nsys-rep"
    report.write_text("")
    assert run_stats(str(slow), report, tmp_path, timeout_s=1) == \
        "`nsys stats` did not finish within 1 s"


def test_resolved_names_the_binary(tmp_path: Path, fake_nsys: str):
    assert NsysCollector().resolved(options(), ctx(tmp_path, {"NSYS_BIN": fake_nsys})) == \
        {"nsys_binary": fake_nsys}


def test_wrap_is_pure(tmp_path: Path, fake_nsys: str):
    out = tmp_path / "never-created"
    NsysCollector().wrap(Launch(("./app",)), out, options(), ctx(tmp_path, {"NSYS_BIN": fake_nsys}))
    assert not out.exists() and sorted(os.listdir(tmp_path)) == ["nsight-systems"]
