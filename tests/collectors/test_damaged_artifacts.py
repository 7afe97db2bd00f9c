"""Damaged copies of every real artifact, through every collector's summarize (issue 12.1).

The matrix: for each real capture, the file cut inside a field, cut at a line break and damaged
mid-file, values of the wrong type at every level of the JSON formats, and numbers that are
negative, NaN, infinite or text in the CSV formats (`damage.py` makes the copies). Every case
must read `partial` or `unparsed`, never `ok`, unless its damage cannot be seen in the content
(a cut exactly at a line break), and no published per-kernel figure may exceed the undamaged
copy's. After the matrix, the seven cases the issue found, one test each.
"""

from __future__ import annotations

import cProfile
import json
import marshal
import math
import os
import shutil
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.base import TrialOutcome
from aorta.collectors.cprofile.collector import CProfileCollector
from aorta.collectors.ncu.collector import profile_metrics
from aorta.collectors.nsys.collector import STATS_LOG, run_stats, summary_metrics
from aorta.collectors.proton.collector import ProtonCollector
from aorta.collectors.registry import get
from aorta.collectors.rocprof.collector import RocprofCollector
from aorta.collectors.torch.collector import TorchCollector
from aorta.parsers.ncu_csv import TIME_METRIC, read_ncu_csv
from aorta.parsers.nsys_csv import read_kern_sum
from damage import (WRONG, Damaged, check, csv_cases, dump, json_cases, mutate_json, spans,
                    truth)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RAN = TrialOutcome(exit_code=0, signal=None, timed_out=False, launched=True)
ROCPROF, PROTON, TORCH, CPROFILE = (RocprofCollector(), ProtonCollector(), TorchCollector(),
                                    CProfileCollector())


def ids(cases: list[Damaged]) -> list[str]:
    return [c.case for c in cases]


def fresh(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    return out


# --- rocprof: stats and ROCm 6/7 traces ------------------------------------------------------

def rocprof(tmp_path: Path, files: dict[str, bytes]) -> dict[str, Any]:
    out = fresh(tmp_path, "rocprof")
    for name, data in files.items():
        (out / name).write_bytes(data)
    return ROCPROF.summarize(out, ROCPROF.validate(None), RAN)


STATS = (FIXTURES / "rocprof" / "jacobi-stats" / "jacobi_kernel_stats.csv").read_bytes()
TRACE6 = (FIXTURES / "rocprof" / "lumi-trace-6x" / "74441_kernel_trace.csv").read_bytes()
TRACE7 = (FIXTURES / "rocprof" / "omp-trace-7x" / "out_kernel_trace.csv").read_bytes()
STATS_CASES = list(csv_cases(STATS, numeric=[1, 2], name=0, rows=[1, 4]))
TRACE_CASES = [("rocm6", c) for c in csv_cases(TRACE6, numeric=[8, 9], name=6)] + \
    [("rocm7", c) for c in csv_cases(TRACE7, numeric=[10, 11], name=8)]


@pytest.mark.parametrize("case", STATS_CASES, ids=ids(STATS_CASES))
def test_rocprof_stats(tmp_path: Path, case: Damaged) -> None:
    whole = truth(rocprof(tmp_path, {"a_kernel_stats.csv": STATS}), "rocprof")
    state = check(rocprof(tmp_path, {"a_kernel_stats.csv": case.data}), "rocprof", whole, case)
    if "cut at the line break after line 5" in case.case:
        # The last row holds 0.0005 % of the time: under the Percentage check's rounding slack.
        assert state == "ok"
    elif not case.seen:
        assert state == "partial"        # caught by the Percentage column


@pytest.mark.parametrize(("layout", "case"), TRACE_CASES,
                         ids=[f"{layout}-{c.case}" for layout, c in TRACE_CASES])
def test_rocprof_trace(tmp_path: Path, layout: str, case: Damaged) -> None:
    original = TRACE6 if layout == "rocm6" else TRACE7
    whole = truth(rocprof(tmp_path, {"a_kernel_trace.csv": original}), "rocprof")
    check(rocprof(tmp_path, {"a_kernel_trace.csv": case.data}), "rocprof", whole, case)


SAMPLE_STATS = (FIXTURES / "rocprof" / "stats" / "aorta_4242_kernel_stats.csv").read_bytes()
SAMPLE_TRACE = (FIXTURES / "rocprof" / "rocm7" / "aorta_4242_kernel_trace.csv").read_bytes()
CROSS = [Damaged(f"trace {c.case}", c.data, c.seen)
         for c in csv_cases(SAMPLE_TRACE, numeric=[10, 11], name=8)]


@pytest.mark.parametrize("case", CROSS, ids=ids(CROSS))
def test_rocprof_stats_and_a_damaged_trace_give_the_whole_figures(tmp_path: Path,
                                                                   case: Damaged) -> None:
    """With whole stats beside it, a trace cut anywhere (at a line break too) changes no
    figure: the stats give them, and the trace's shortfall is noted."""
    whole = rocprof(tmp_path, {"a_kernel_stats.csv": SAMPLE_STATS,
                               "a_kernel_trace.csv": SAMPLE_TRACE})
    assert whole["rocprof_capture"] == "ok" and "rocprof_trace_note" not in whole
    got = rocprof(tmp_path, {"a_kernel_stats.csv": SAMPLE_STATS, "a_kernel_trace.csv": case.data})
    assert got["rocprof_capture"] == "ok" and got["rocprof_source"] == "stats"
    assert got["rocprof_kernels"] == whole["rocprof_kernels"]
    assert "rocprof_trace_note" in got


def _without_percentage(data: bytes) -> bytes:
    """The stats without their Percentage column, so only the trace can catch a cut."""
    lines = data.split(b"\n")
    at = spans(lines[0])[4]
    assert lines[0][at[0]:at[1]] == b'"Percentage"'
    return b"\n".join(line[:spans(line)[4][0]] + line[spans(line)[5][0]:] if line else line
                      for line in lines)


STATS_LINES = SAMPLE_STATS.split(b"\n")
CUT_STATS = [Damaged(f"stats{label} cut at the line break after line {n}",
                     transform(b"\n".join(STATS_LINES[:n + 1]) + b"\n"), seen=False)
             for n in (1, 2) for label, transform in (("", bytes),
                                                      (" without Percentage", _without_percentage))]


@pytest.mark.parametrize("case", CUT_STATS, ids=ids(CUT_STATS))
def test_rocprof_stats_cut_at_a_line_break_is_caught_by_the_trace(tmp_path: Path,
                                                                  case: Damaged) -> None:
    got = rocprof(tmp_path, {"a_kernel_stats.csv": case.data, "a_kernel_trace.csv": SAMPLE_TRACE})
    whole = rocprof(tmp_path, {"a_kernel_trace.csv": SAMPLE_TRACE})
    assert got["rocprof_capture"] == "ok" and got["rocprof_source"] == "trace"
    assert got["rocprof_kernels"] == whole["rocprof_kernels"]
    caught_by = "fewer calls than the trace" if "without" in case.case else "Percentage column"
    assert caught_by in got["rocprof_stats_note"]


# --- Proton: hatchet trees and chrome traces --------------------------------------------------

def proton(tmp_path: Path, data: Any, suffix: str = ".hatchet",
           raw: dict[str, Any] | None = None) -> dict[str, Any]:
    out = fresh(tmp_path, "proton")
    (out / f"proton{suffix}").write_bytes(dump(data))
    return PROTON.summarize(out, PROTON.validate(raw), RAN)


def leaf_paths(node: dict[str, Any], path: tuple[Any, ...]) -> Iterator[tuple[Any, ...]]:
    children = node.get("children") or []
    if not children:
        yield path
    for i, child in enumerate(children):
        yield from leaf_paths(child, path + ("children", i))


def tree_cases(path: Path) -> list[Damaged]:
    doc = json.loads(path.read_text())
    leaf = next(p for p in leaf_paths(doc[0], (0,))
                if "time (ns)" in _at(doc, p).get("metrics", {}))
    inner = leaf[:-2]
    cases = list(json_cases(path.read_bytes()))
    cases += mutate_json(doc, (0, "children"), [{"a": 1}, "x", 5])
    cases += mutate_json(doc, (0, "children", 0), [5, "x", None, [1]])
    cases += mutate_json(doc, inner + ("children",), [{"a": 1}, 7])
    cases += mutate_json(doc, leaf, [5, None, [1], "leaf"])
    cases += mutate_json(doc, leaf + ("frame",), ["add_kernel", None, 5, [1]])
    cases += mutate_json(doc, leaf + ("frame", "name"), [7, None, "", [1]])
    cases += mutate_json(doc, leaf + ("metrics",), [[1], "x", 5, None])
    cases += mutate_json(doc, leaf + ("metrics", "time (ns)"), WRONG + [-0.5, 1e999])
    cases += mutate_json(doc, leaf + ("metrics", "count"), [-1, "3", 2.5, None, math.nan])
    cases += mutate_json(doc, (0,), [5, "x", [1, 2, 3]])
    cases.append(Damaged("the document is [1, 2, 3]", [1, 2, 3]))
    return cases


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


TREES = {name: FIXTURES / "proton" / "h200" / name / "proton.hatchet"
         for name in ("cli-tree", "cli-python")}
TREE_CASES = [(name, c) for name, path in TREES.items() for c in tree_cases(path)]


@pytest.mark.parametrize(("tree", "case"), TREE_CASES,
                         ids=[f"{t}-{c.case}" for t, c in TREE_CASES])
def test_proton_tree(tmp_path: Path, tree: str, case: Damaged) -> None:
    whole = truth(proton(tmp_path, TREES[tree].read_bytes()), "proton")
    check(proton(tmp_path, case.data), "proton", whole, case)


def trace_cases(path: Path, category: str = "kernel") -> list[Damaged]:
    doc = json.loads(path.read_text())
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    index = next(i for i, e in enumerate(events) if e.get("cat") == category)
    at = ("traceEvents", index) if isinstance(doc, dict) else (index,)
    cases = list(json_cases(path.read_bytes()))
    cases += mutate_json(doc, at, [[1, 2], 7, None, "event"])
    cases += mutate_json(doc, at + ("dur",), WRONG + ["abc", -0.001, 1e999])
    cases += mutate_json(doc, at + ("name",), [5, None, "", [1], {"a": 1}])
    cases += mutate_json(doc, at + ("ts",), [None, "x", math.nan, [1]])
    cases += mutate_json(doc, at + ("cat",), [5, [category]])
    cases += mutate_json(doc, at + ("ph",), [None, 5])
    if isinstance(doc, dict):
        cases += mutate_json(doc, ("traceEvents",), [{"a": 1}, "x", None, 5])
    cases += [Damaged("the document is [1, 2, 3]", [1, 2, 3]),
              Damaged("the document is 5", 5), Damaged("the document is {}", {})]
    return cases


PROTON_TRACE = FIXTURES / "proton" / "h200" / "trace" / "proton.chrome_trace"
PROTON_TRACE_CASES = trace_cases(PROTON_TRACE)


@pytest.mark.parametrize("case", PROTON_TRACE_CASES, ids=ids(PROTON_TRACE_CASES))
def test_proton_chrome_trace(tmp_path: Path, case: Damaged) -> None:
    raw = {"data": "trace"}
    whole = truth(proton(tmp_path, PROTON_TRACE.read_bytes(), ".chrome_trace", raw), "proton")
    check(proton(tmp_path, case.data, ".chrome_trace", raw), "proton", whole, case)


# --- Proton instrumentation: cycles per scope --------------------------------------------------

INSTRUMENTED = FIXTURES / "proton" / "h200" / "instrumentation" / "proton.hatchet"


def instrumentation_cases() -> list[Damaged]:
    doc = json.loads(INSTRUMENTED.read_text())
    leaf = next(p for p in leaf_paths(doc[0], (0,)) if "cycles" in _at(doc, p)["metrics"])
    cases = list(json_cases(INSTRUMENTED.read_bytes()))
    cases += mutate_json(doc, leaf + ("metrics", "cycles"), WRONG + [-3])
    cases += mutate_json(doc, leaf + ("metrics",), [[1], "x"])
    cases += mutate_json(doc, leaf + ("frame",), ["cheap", None])
    cases += mutate_json(doc, leaf, [5, None])
    return cases


INSTRUMENTATION_CASES = instrumentation_cases()


@pytest.mark.parametrize("case", INSTRUMENTATION_CASES, ids=ids(INSTRUMENTATION_CASES))
def test_proton_instrumentation(tmp_path: Path, case: Damaged) -> None:
    raw = {"backend": "instrumentation", "mode": "env"}
    whole = proton(tmp_path, INSTRUMENTED.read_bytes(), raw=raw)
    assert whole["proton_capture"] == "ok"
    got = proton(tmp_path, case.data, raw=raw)
    state = check(got, "proton", {}, case)
    for scope, cycles in got.get("proton_scope_cycles", {}).items():
        assert cycles <= whole["proton_scope_cycles"][scope], case.case
    assert state != "ok"


# --- torch: Kineto chrome traces ----------------------------------------------------------------

def torch(tmp_path: Path, data: Any) -> dict[str, Any]:
    out = fresh(tmp_path, "torch")
    (out / "trace.json").write_bytes(dump(data))
    return TORCH.summarize(out, TORCH.validate(None), RAN)


TORCH_TRACES = {name: FIXTURES / "torch" / "h200" / f"{name}_trace.json"
                for name in ("mm", "vecadd")}
TORCH_CASES = [(name, c) for name, path in TORCH_TRACES.items() for c in trace_cases(path)]
CPU_TRACE = FIXTURES / "torch" / "cpu" / "matmul_trace.json"
CPU_CASES = trace_cases(CPU_TRACE, "cpu_op")


@pytest.mark.parametrize(("trace", "case"), TORCH_CASES,
                         ids=[f"{t}-{c.case}" for t, c in TORCH_CASES])
def test_torch_gpu_trace(tmp_path: Path, trace: str, case: Damaged) -> None:
    whole = truth(torch(tmp_path, TORCH_TRACES[trace].read_bytes()), "torch")
    check(torch(tmp_path, case.data), "torch", whole, case)


@pytest.mark.parametrize("case", CPU_CASES, ids=ids(CPU_CASES))
def test_torch_cpu_trace(tmp_path: Path, case: Damaged) -> None:
    """Operator self times are not bounded by the whole trace's (a lost child adds its time to
    its parent's), so only the state and the count are held to the rule here."""
    assert torch(tmp_path, CPU_TRACE.read_bytes())["torch_capture"] == "ok"
    got = torch(tmp_path, case.data)
    state = check(got, "torch", {}, case, table="no-table")
    if state != "ok":
        assert "torch_cpu_op_count" not in got


# --- ncu: raw and details pages -----------------------------------------------------------------

NCU = FIXTURES / "ncu" / "h200"
PROFILED = 7      # the `==PROF== Profiling` lines of the H200 run that made these exports


def ncu(tmp_path: Path, data: bytes, profiled: int | None) -> dict[str, Any]:
    path = tmp_path / "raw.csv"
    path.write_bytes(data)
    try:
        profile = read_ncu_csv(path, [TIME_METRIC, "dram__bytes.sum"])
    except ValueError as exc:
        return {"ncu_capture": "unparsed", "ncu_capture_reason": str(exc)}
    return profile_metrics(profile, [TIME_METRIC, "dram__bytes.sum"], profiled)


def ncu_cases() -> list[tuple[str, bool, Damaged]]:
    raw = (NCU / "mm_raw.csv").read_bytes()
    header = next(iter(__import__("csv").reader([raw.split(b"\n")[0].decode()])))
    time_at, name_at = header.index(TIME_METRIC), header.index("Kernel Name")
    details = (NCU / "mm_details.csv").read_bytes()
    lines = details.split(b"\n")
    time_rows = [i for i, line in enumerate(lines) if TIME_METRIC.encode() in line]
    cases = []
    for with_log in (False, True):
        for case in csv_cases(raw, numeric=[time_at], name=name_at, first_row=2):
            cases.append(("raw", with_log, case))
        for case in csv_cases(details, numeric=[14], name=4, rows=time_rows[:2]):
            cases.append(("details", with_log, case))
    return cases


NCU_CASES = ncu_cases()


@pytest.mark.parametrize(("page", "with_log", "case"), NCU_CASES,
                         ids=[f"{p}-{'log' if w else 'nolog'}-{c.case}" for p, w, c in NCU_CASES])
def test_ncu(tmp_path: Path, page: str, with_log: bool, case: Damaged) -> None:
    original = (NCU / f"mm_{page}.csv").read_bytes()
    profiled = PROFILED if with_log else None
    complete = ncu(tmp_path, original, profiled)
    got = ncu(tmp_path, case.data, profiled)
    state = check(got, "ncu", truth(complete, "ncu"), case)
    if with_log and state == "ok":
        # A cut the content hides: with ncu's own count of launches, ok means nothing was lost.
        assert got["ncu_kernels"] == complete["ncu_kernels"], case.case


# --- nsys: the kernel summary -------------------------------------------------------------------

NSYS = (FIXTURES / "nsys" / "written" / "kern_cuda_gpu_kern_sum.csv").read_bytes()
NSYS_CASES = list(csv_cases(NSYS, numeric=[1, 2], name=8, rows=[1, 2]))


def nsys(tmp_path: Path, data: bytes) -> dict[str, Any]:
    path = tmp_path / "kern.csv"
    path.write_bytes(data)
    try:
        return summary_metrics(read_kern_sum(path), path.name)
    except ValueError as exc:
        return {"nsys_capture": "unparsed", "nsys_capture_reason": str(exc)}


@pytest.mark.parametrize("case", NSYS_CASES, ids=ids(NSYS_CASES))
def test_nsys(tmp_path: Path, case: Damaged) -> None:
    whole = truth(nsys(tmp_path, NSYS), "nsys")
    state = check(nsys(tmp_path, case.data), "nsys", whole, case)
    if case.case.startswith("cut at the line break after line 1"):
        assert state == "partial"          # caught by the Time (%) column


# --- cProfile: pstats dumps -----------------------------------------------------------------------

def _work() -> int:
    return sum(sorted(range(2000), key=lambda x: -x)[:10])


def pstats_dump() -> dict[Any, Any]:
    profiler = cProfile.Profile()
    profiler.enable()
    _work()
    profiler.disable()
    profiler.create_stats()
    return dict(profiler.stats)   # type: ignore[attr-defined]


def pstats_cases(stats: dict[Any, Any]) -> list[Damaged]:
    data = marshal.dumps(stats)
    key = next(k for k in stats if k[2] == "_work")
    cases = [Damaged(f"cut at byte {len(data) * i // 8}", data[:len(data) * i // 8])
             for i in range(1, 8)] + [Damaged("cut one byte short", data[:-1])]
    for index, values in ((1, [-1, "3", 1.5, None]), (2, [math.nan, math.inf, -1.0, "x"]),
                          (3, [math.nan, -math.inf, "x"])):
        for value in values:
            entry = list(stats[key])
            entry[index] = value
            cases.append(Damaged(f"_work field {index} = {value!r}",
                                 marshal.dumps({**stats, key: tuple(entry)})))
    for bad_key in ("x", ("f", "1", "g"), (1, 2)):
        cases.append(Damaged(f"a key {bad_key!r}",
                             marshal.dumps({**stats, bad_key: stats[key]})))
    for bad_value in (None, (1, 2), ("a", 1, 1.0, 1.0, {})):
        cases.append(Damaged(f"_work value {bad_value!r}",
                             marshal.dumps({**stats, key: bad_value})))
    cases += [Damaged("a marshalled list", marshal.dumps([1, 2])),
              Damaged("a marshalled int", marshal.dumps(5)), Damaged("garbage", b"\x00\xff" * 9)]
    return cases


PSTATS = pstats_dump()
PSTATS_CASES = pstats_cases(PSTATS)


def cprofile(tmp_path: Path, data: bytes) -> dict[str, Any]:
    out = fresh(tmp_path, "cprofile")
    (out / "profile.pstats").write_bytes(data)
    return CPROFILE.summarize(out, CPROFILE.validate(None), RAN)


@pytest.mark.parametrize("case", PSTATS_CASES, ids=ids(PSTATS_CASES))
def test_pstats(tmp_path: Path, case: Damaged) -> None:
    good = cprofile(tmp_path, marshal.dumps(PSTATS))
    whole = truth(good, "cprofile", table="functions")
    got = cprofile(tmp_path, case.data)
    check(got, "cprofile", whole, case, table="functions")
    if got["cprofile_capture"] != "ok":
        assert "cprofile_call_count" not in got


# --- the cases issue 12.1 found, one by one ---------------------------------------------------

def test_stats_cut_inside_a_number_publishes_no_143_ns(tmp_path: Path) -> None:
    cut = STATS[:STATS.index(b'"HaloLaplacianKernel",1000,143') + 30]
    assert cut.endswith(b'"HaloLaplacianKernel",1000,143')
    got = rocprof(tmp_path, {"a_kernel_stats.csv": cut})
    assert got["rocprof_capture"] == "partial" and "cut short" in got["rocprof_capture_reason"]
    assert "HaloLaplacianKernel" not in [r["name"] for r in got["rocprof_kernels"]]


@pytest.mark.parametrize("name", ["a_kernel_stats.csv", "a_kernel_trace.csv"])
def test_text_in_a_time_column_is_partial_not_ok(tmp_path: Path, name: str) -> None:
    data = STATS.replace(b",273680984,", b",27368x984,") if "stats" in name else \
        TRACE7.replace(b",1678314002982197,", b",16783140O2982197,", 1)
    assert data != (STATS if "stats" in name else TRACE7)
    got = rocprof(tmp_path, {name: data})
    assert got["rocprof_capture"] == "partial" and got["rocprof_skipped"] == 1


def test_proton_root_children_of_the_wrong_type_is_unparsed_not_empty(tmp_path: Path) -> None:
    doc = json.loads(TREES["cli-tree"].read_text())
    doc[0]["children"] = {"a": 1}
    got = proton(tmp_path, doc)
    assert got["proton_capture"] == "unparsed" and "not a list" in got["proton_capture_reason"]


def test_a_trace_that_is_a_list_of_numbers_is_unparsed_not_empty(tmp_path: Path) -> None:
    got = torch(tmp_path, [1, 2, 3])
    assert (got["torch_capture"], got["torch_skipped"]) == ("unparsed", 3)


# --- links and FIFOs the payload planted in its own artifact directory ------------------------

def _tool(tmp_path: Path, name: str, says: str) -> Path:
    tool = tmp_path / "bin" / name
    tool.parent.mkdir(exist_ok=True)
    tool.write_text(f"#!/bin/sh\necho '{says}'\n")
    tool.chmod(0o755)
    return tool


def test_a_planted_link_never_aims_ncus_export_outside(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = fresh(tmp_path, "ncu")
    (out / "profile.ncu-rep").write_text("x")
    (out / "raw.csv").symlink_to(victim)
    ncu = get("ncu")
    env = {"NCU_BIN": str(_tool(tmp_path, "ncu", "ID,Kernel Name")), "PATH": "/usr/bin:/bin"}
    got = ncu.summarize(out, ncu.validate(None), replace(RAN, base_env=env))
    assert victim.read_text() == "precious\n"
    assert got["ncu_capture"] != "ok"


def test_a_planted_link_never_aims_nsys_stats_log_outside(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = fresh(tmp_path, "nsys")
    (out / STATS_LOG).symlink_to(victim)
    why = run_stats(str(_tool(tmp_path, "nsys", "nope")), out / "report.nsys-rep", out)
    assert victim.read_text() == "precious\n" and isinstance(why, str)


@pytest.mark.parametrize(("collector", "fifo"), [("ncu", "ncu.log"), ("torch", "summary.json")])
def test_a_fifo_where_a_log_or_summary_should_be_does_not_hang(
        tmp_path: Path, collector: str, fifo: str) -> None:
    out = fresh(tmp_path, collector)
    os.mkfifo(out / fifo)
    chosen = get(collector)
    got = chosen.summarize(out, chosen.validate(None), RAN)   # a blocking open never returns
    assert got[f"{collector}_capture"] in ("missing", "unparsed", "empty")
