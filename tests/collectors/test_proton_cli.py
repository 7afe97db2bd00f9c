"""Proton through the real `aorta sweep run` on this (GPU-less) machine: what is refused before
any trial, and with which message (a command no Proton could wrap before a missing Triton). Plus
a guard on the GPU test module's child processes."""

from __future__ import annotations

import ast
import importlib.util
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
GPU_TESTS = Path(__file__).resolve().parents[1] / "gpu" / "test_proton_gpu.py"
HAS_TRITON = importlib.util.find_spec("triton") is not None


def sweep(tmp_path: Path, recipe: str, *extra: str,
          command: list[str] | None = None) -> tuple[int, str]:
    """`aorta sweep run` as a user runs it (on `python s.py` by default); (exit code, stderr)."""
    path = tmp_path / "recipe.yaml"
    path.write_text(textwrap.dedent(recipe))
    script = tmp_path / "s.py"
    script.write_text("print('ran')\n")
    env = dict(os.environ, PYTHONPATH=str(SRC))
    proc = subprocess.run([sys.executable, "-m", "aorta", "sweep", "run", "--recipe", str(path),
                           "--output", str(tmp_path / "out"), *extra, "--",
                           *(command or [sys.executable, str(script)])],
                          capture_output=True, text=True, timeout=120, env=env, check=False)
    return proc.returncode, proc.stderr


def test_roctracer_pin_under_cli_is_refused_at_load(tmp_path: Path) -> None:
    code, err = sweep(tmp_path, """
        schema_version: 1
        collect: {proton: {backend: roctracer}}
    """)
    assert code == 2
    assert "collect.proton.backend: roctracer cannot be pinned under mode: cli" in err
    assert "use mode: env" in err
    assert not (tmp_path / "out").exists()


def test_unknown_option_is_refused_at_load(tmp_path: Path) -> None:
    code, err = sweep(tmp_path, """
        schema_version: 1
        collect: {proton: {backend: nope, sampling: x}}
    """)
    assert code == 2 and "collect.proton.sampling: unknown key; allowed: backend," in err


@pytest.mark.skipif(HAS_TRITON, reason="Triton is installed here")
def test_a_machine_without_triton_runs_no_trial(tmp_path: Path) -> None:
    code, err = sweep(tmp_path, """
        schema_version: 1
        collect: {proton: null}
    """)
    assert code == 2
    assert "collector proton cannot measure on this machine: Triton is not installed" in err
    assert "AORTA_PROTON_PYTHON" in err
    assert not list((tmp_path / "out").glob("*/cells/*/trial_*/stdout.log"))


@pytest.mark.skipif(HAS_TRITON, reason="Triton is installed here")
def test_a_native_command_is_refused_for_what_it_is_before_triton_is_looked_for(
        tmp_path: Path) -> None:
    """`--collect proton` in front of a binary: the fix is mode: env, whatever is installed."""
    code, err = sweep(tmp_path, """
        schema_version: 1
        collect: {proton: null}
    """, command=["/bin/echo", "hi"])
    assert code == 2
    assert "proton: needs a Python script launch (python script.py, pytest, python -m " \
           "pytest), got '/bin/echo'; use mode: env instead" in err
    assert "Triton is not installed" not in err
    assert not (tmp_path / "out").exists()


rocprof_present = importlib.util.find_spec("aorta.collectors.rocprof.collector") is not None


@pytest.mark.skipif(not rocprof_present, reason="the rocprof collector is not in this tree yet")
def test_collect_override_keeps_the_survivors_options_then_refuses(tmp_path: Path) -> None:
    code, err = sweep(tmp_path, """
        schema_version: 1
        collect: {rocprof: null}
    """, "--collect", "rocprof,proton")
    assert code == 2
    assert ("proton (backend: auto, which resolves to rocprofiler or roctracer on AMD and "
            "cupti on NVIDIA)") in err
    assert "proton: {backend: instrumentation}" in err


@pytest.mark.skipif(not rocprof_present, reason="the rocprof collector is not in this tree yet")
def test_collect_override_with_instrumentation_pinned_is_accepted_at_load(tmp_path: Path) -> None:
    code, err = sweep(tmp_path, """
        schema_version: 1
        collect: {proton: {backend: instrumentation}}
    """, "--collect", "rocprof,proton")
    assert "cannot run in one trial" not in err


def test_every_child_process_of_the_gpu_tests_has_a_timeout() -> None:
    """A hung GPU child must not outlive the test run."""
    for node in ast.walk(ast.parse(GPU_TESTS.read_text())):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("run", "communicate", "check_output", "call"):
            assert any(k.arg == "timeout" for k in node.keywords), ast.unparse(node)


def test_importing_the_collector_loads_neither_torch_nor_triton() -> None:
    code = ("import sys, aorta.collectors.proton.collector, aorta.parsers.hatchet; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'triton')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
                          check=True)
    assert done.stdout.strip() == "[]"
