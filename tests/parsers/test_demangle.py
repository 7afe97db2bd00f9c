"""`aorta.parsers.demangle` and demangled kernel tables (issue 12.3): Proton's mangled names read as the
PyTorch profiler prints them, on the H200 captures of one vector-add run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import aorta.parsers.demangle as demangle_module
from aorta.parsers.demangle import demangle, demangle_all, looks_mangled
from aorta.parsers.chrome_trace import read_events
from aorta.parsers.hatchet import HatchetSummary
from aorta.parsers.kernel_table import KernelTable
from aorta.parsers.skips import Skips

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CUTLASS = "_ZN7cutlass7Kernel2I43cutlass_80_simt_sgemm_256x128_8x4_nn_align1EEvNT_6ParamsE"
CUTLASS_AS_TORCH_PRINTS = ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"
                           "(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")


def demangler_name() -> str:
    """Which demangler this process uses: `cxxfilt`, a tool's path, or `none`."""
    return demangle_module._backend_choice()[0]


needs_demangler = pytest.mark.skipif(demangler_name() == "none",
                                     reason="neither cxxfilt nor c++filt is installed")


@needs_demangler
def test_the_cutlass_kernel_of_issue_12_3() -> None:
    assert demangle(CUTLASS) == CUTLASS_AS_TORCH_PRINTS


@needs_demangler
def test_proton_names_match_the_torch_trace_of_the_same_kernels() -> None:
    tree = HatchetSummary()
    tree.add_file(FIXTURES / "proton" / "h200" / "cli-tree" / "proton.hatchet")
    proton = {row["name"] for row in tree.kernels.metrics("proton")["proton_kernels"]}
    torch = {ev.name for ev in read_events(FIXTURES / "torch" / "h200" / "vecadd_trace.json",
                                           frozenset({"kernel"}), Skips())}
    assert any(name.startswith("_Z") for name in tree.kernels.rows)
    assert proton == torch            # the same 13 kernels, every name byte for byte


@needs_demangler
def test_rows_keep_the_mangled_name() -> None:
    table = KernelTable()
    table.add(CUTLASS, 1000.0)
    table.add("add_kernel", 500.0)
    rows = table.metrics("x")["x_kernels"]
    assert rows[0] == {"name": CUTLASS_AS_TORCH_PRINTS, "calls": 1, "total_ms": 0.001,
                       "mangled": CUTLASS}
    assert rows[1] == {"name": "add_kernel", "calls": 1, "total_ms": 0.0005}


@needs_demangler
def test_a_mangled_and_a_demangled_row_of_one_kernel_merge() -> None:
    table = KernelTable()
    table.add(CUTLASS, 1000.0, 2)
    table.add(CUTLASS_AS_TORCH_PRINTS, 500.0, None)
    (row,) = table.metrics("x")["x_kernels"]
    assert (row["calls"], row["total_ms"], row["mangled"]) == (None, 0.0015, CUTLASS)


@pytest.mark.parametrize("name", ["add_kernel", "", "_Z", "_Zbogus!", "void f(int)",
                                  "_ZN7cutlass\n", "triton_poi_fused_0"])
def test_names_that_are_not_mangled_stay(name: str) -> None:
    assert demangle(name) == name


def test_a_name_no_demangler_reads_stays() -> None:
    assert looks_mangled("_ZZZZ") and demangle("_ZZZZ") == "_ZZZZ"


def test_the_tool_backend_gives_the_same_names(monkeypatch: pytest.MonkeyPatch) -> None:
    tool = shutil.which("c++filt") or shutil.which("llvm-cxxfilt")
    if tool is None:
        pytest.skip("no c++filt on PATH")
    names = [CUTLASS, "_ZZZZ"] + sorted(set(
        n for n in json.loads((FIXTURES / "proton" / "h200" / "cli-tree" /
                               "proton.hatchet").read_text()).__repr__().split("'")
        if n.startswith("_ZN")))
    got = demangle_module._with_tool(tool, names)
    assert got[CUTLASS] == CUTLASS_AS_TORCH_PRINTS and got["_ZZZZ"] == "_ZZZZ"
    if demangler_name() == "cxxfilt":
        assert got == demangle_module._with_cxxfilt(names)


def test_no_demangler_returns_names_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(demangle_module, "_backend_choice",
                        lambda: ("none", demangle_module._unchanged))
    monkeypatch.setattr(demangle_module, "_cache", {})
    assert demangle_all([CUTLASS]) == {CUTLASS: CUTLASS}


def test_a_failing_tool_returns_names_unchanged(tmp_path: Path) -> None:
    broken = tmp_path / "c++filt"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    assert demangle_module._with_tool(str(broken), [CUTLASS]) == {CUTLASS: CUTLASS}
    assert demangle_module._with_tool(str(tmp_path / "absent"), [CUTLASS]) == {CUTLASS: CUTLASS}
