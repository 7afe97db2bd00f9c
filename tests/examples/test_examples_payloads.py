"""The payloads' conventions, checked without a GPU, torch or Triton.

Python payloads are never imported here (their module level imports torch and Triton). The
tests read their syntax tree, run the main guard against a stand-in `main`, run the
self-contained helpers (`parse_args`, `proton_settings`) on their own, and run the scripts for
real only where they must stop before any GPU work: under `python -I -S`, where neither torch
nor Triton can be imported, they must exit 2 with a one-line reason. Where torch is importable,
the matmul payload also runs for real on the CPU. The GEMM source is compiled with nvcc (or
hipcc) when one is installed, and its argument handling is exercised; with no GPU it must
exit 2.
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.proton.collector import env_overlay
from aorta.collectors.proton.options import ProtonOptions
from examples_catalog import PROFILING, PROTON_EXAMPLES, PYTHON_EXAMPLES, Example
from payload_ast import exit_calls, load_functions, main_guard, string_constants

CHILD_TIMEOUT_S = 120
HELPER_GLOBALS = {"argparse": argparse, "os": os, "sys": sys}

#: The defaults each payload documents (cheap: seconds on one GPU), and one argv it must refuse.
DEFAULTS: dict[str, tuple[dict[str, Any], list[str]]] = {
    "rocprof/torch-matmul": ({"size": 2048, "iters": 20, "warmup": 3, "dtype": "float16",
                              "device": "cuda"}, ["--size", "0"]),
    "proton/triton-vecadd": ({"size": 1 << 20, "iters": 20, "block_size": 1024},
                             ["--block-size", "1000"]),
    "proton/triton-softmax": ({"rows": 4096, "cols": 1024, "iters": 20}, ["--cols", "16385"]),
    "proton/amd-roctracer": ({"rows": 4096, "cols": 1024, "iters": 20, "backend": None},
                             ["--rows", "1048576", "--cols", "16384"]),
    "proton/amd-instrumentation": ({"size": 65536, "steps": 8, "iters": 5, "backend": None},
                                   ["--steps", "65"]),
    "proton/amd-rocprofiler": ({"size": 1 << 22, "iters": 50, "backend": None,
                                "backend_mode": None}, ["--backend-mode", "pcsampling"]),
    "proton/nvidia-instrumentation": ({"rows": 8192, "cols": 1024, "iters": 10},
                                      ["--iters", "0"]),
}
DEFAULTS["nsys/torch-matmul"] = DEFAULTS["torch/torch-matmul"] = DEFAULTS["rocprof/torch-matmul"]


def tree_of(example: Example) -> ast.Module:
    return ast.parse(example.payload.read_text(), str(example.payload))


def env_mode_payloads() -> tuple[Example, ...]:
    return tuple(e for e in PROTON_EXAMPLES if "mode: env" in e.recipe.read_text())


# --- exit convention ---------------------------------------------------------------------------

@pytest.mark.parametrize("example", PYTHON_EXAMPLES, ids=lambda e: e.key)
@pytest.mark.parametrize("code", [0, 1, 2])
def test_main_guard_turns_the_return_value_into_the_exit_status(example: Example, code: int):
    guard = main_guard(tree_of(example))
    assert guard is not None, "the last statement must be `if __name__ == '__main__':`"
    module = compile(ast.Module(body=[guard], type_ignores=[]), str(example.payload), "exec")
    namespace = {"__name__": "__main__", "main": lambda: code}
    if code == 0:
        exec(module, namespace)         # no SystemExit at all: Proton's finalize() must run
    else:
        with pytest.raises(SystemExit) as exited:
            exec(module, namespace)
        assert exited.value.code == code


@pytest.mark.parametrize("example", PYTHON_EXAMPLES, ids=lambda e: e.key)
def test_no_exit_can_be_zero(example: Example):
    """Every exit names a non-zero status (a literal, or the guard's checked `code`)."""
    tree = tree_of(example)
    guard_lines = range(main_guard(tree).lineno, main_guard(tree).end_lineno + 1)
    for line, callee, argument in exit_calls(tree):
        assert callee == "SystemExit", f"line {line}: use return codes, not {callee}()"
        if line in guard_lines:
            assert isinstance(argument, ast.Name) and argument.id == "code", f"line {line}"
        else:
            assert isinstance(argument, ast.Constant) and argument.value in (1, 2), \
                f"line {line}: SystemExit needs a literal 1 or 2 outside the main guard"


@pytest.mark.parametrize("example", PYTHON_EXAMPLES, ids=lambda e: e.key)
def test_main_returns_a_status_on_every_return(example: Example):
    main = next(n for n in tree_of(example).body
                if isinstance(n, ast.FunctionDef) and n.name == "main")
    returns = [n for n in ast.walk(main) if isinstance(n, ast.Return)]
    assert returns and all(r.value is not None for r in returns)


# --- sizes from the command line ---------------------------------------------------------------

@pytest.mark.parametrize("example", PYTHON_EXAMPLES, ids=lambda e: e.key)
def test_parse_args_defaults_and_refusals(example: Example):
    defaults, refused = DEFAULTS[example.key]
    parse_args = load_functions(example.payload, ("parse_args",),
                                dict(HELPER_GLOBALS))["parse_args"]
    assert {k: v for k, v in vars(parse_args([])).items() if k in defaults} == defaults
    with pytest.raises(SystemExit) as exited:
        parse_args(refused)
    assert exited.value.code == 2


@pytest.mark.parametrize("example", PYTHON_EXAMPLES, ids=lambda e: e.key)
def test_sizes_come_from_the_command_line(example: Example):
    defaults, _ = DEFAULTS[example.key]
    parse_args = load_functions(example.payload, ("parse_args",),
                                dict(HELPER_GLOBALS))["parse_args"]
    assert parse_args(["--iters", "3"]).iters == 3
    size_key = "size" if "size" in defaults else "rows"
    assert getattr(parse_args([f"--{size_key}", "64"]), size_key) == 64


# --- the AORTA_PROTON_* variables of mode: env -------------------------------------------------

class RecordingEnv(dict):
    """A mapping that remembers which keys were asked for."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.asked: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> Any:
        self.asked.add(key)
        return super().__getitem__(key)


OPTION_SETS = [
    {"mode": "env", "backend": "roctracer"},
    {"mode": "env", "backend": "rocprofiler", "backend_mode": "pcsampling", "hook": "triton"},
    {"mode": "env", "backend": "instrumentation", "instrumentation_mode": "default",
     "granularity": "warp", "context": "python", "data": "trace"},
    {"mode": "env"},
]


def proton_settings_of(example: Example):
    return load_functions(example.payload, ("proton_settings",),
                          dict(HELPER_GLOBALS))["proton_settings"]


def test_every_env_mode_recipe_has_a_payload_to_check():
    assert {e.key for e in env_mode_payloads()} == {
        "proton/amd-roctracer", "proton/amd-instrumentation", "proton/amd-rocprofiler"}


@pytest.mark.parametrize("options", OPTION_SETS, ids=lambda o: o.get("backend", "auto"))
@pytest.mark.parametrize("example", env_mode_payloads(), ids=lambda e: e.key)
def test_env_mode_payload_reads_every_variable_the_collector_sends(example, options, tmp_path):
    overlay = env_overlay(tmp_path / "proton", ProtonOptions(**options))
    environ = RecordingEnv({**overlay, "UNRELATED": "1"})
    directory, start = proton_settings_of(example)(environ, "cupti", None, "fallback")
    assert set(overlay) <= environ.asked, f"never read: {sorted(set(overlay) - environ.asked)}"
    assert directory == overlay["AORTA_PROTON_DIR"]
    assert start == {
        "name": overlay["AORTA_PROTON_NAME"],
        "context": overlay["AORTA_PROTON_CONTEXT"],
        "data": overlay["AORTA_PROTON_DATA"],
        "backend": overlay.get("AORTA_PROTON_BACKEND", "cupti"),   # auto: the flag's, else None
        "mode": overlay.get("AORTA_PROTON_MODE"),
        "hook": overlay.get("AORTA_PROTON_HOOK"),
    }


@pytest.mark.parametrize("example", env_mode_payloads(), ids=lambda e: e.key)
def test_env_mode_payload_outside_aorta(example: Example):
    settings = proton_settings_of(example)
    assert settings({}, None, None, "fallback") is None, "no variables, no flag: no session"
    directory, start = settings({}, "roctracer", "periodic_flushing", "fallback")
    assert directory is None
    assert start == {"name": "fallback", "context": "shadow", "data": "tree",
                     "backend": "roctracer", "mode": "periodic_flushing", "hook": None}


@pytest.mark.parametrize("example", env_mode_payloads(), ids=lambda e: e.key)
def test_env_mode_payload_names_no_unknown_variable(example: Example, tmp_path: Path):
    possible: set[str] = set()
    for options in OPTION_SETS:
        possible |= set(env_overlay(tmp_path, ProtonOptions(**options)))
    named = {s for s in string_constants(tree_of(example)) if s.startswith("AORTA_PROTON_")}
    assert named == possible


@pytest.mark.parametrize("example", env_mode_payloads(), ids=lambda e: e.key)
def test_env_mode_payload_finalizes_in_a_finally(example: Example):
    tree = tree_of(example)
    finals = [n for n in ast.walk(tree) if isinstance(n, ast.Try) and n.finalbody]
    assert any("proton.finalize()" in ast.unparse(t.finalbody) for t in finals)


# --- running the scripts where they must stop early --------------------------------------------

def run(argv: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
                          check=False, env=env, cwd=PROFILING)


@pytest.mark.parametrize("example", PYTHON_EXAMPLES, ids=lambda e: e.key)
def test_without_torch_or_triton_the_payload_exits_2_with_one_reason(example: Example):
    done = run([sys.executable, "-I", "-S", str(example.payload), "--iters", "1"])
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot run here" in lines[0], done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.torch
def test_matmul_runs_on_the_cpu_and_checks_itself():
    payload = PROFILING / "torch" / "torch-matmul" / "matmul.py"
    done = run([sys.executable, str(payload), "--device", "cpu", "--size", "96", "--iters", "2",
                "--warmup", "1", "--dtype", "float32"])
    assert done.returncode == 0, done.stderr
    assert "products=3 (warmup 1 + iters 2)" in done.stdout and "matmul: PASS" in done.stdout


# --- the portable GEMM source ------------------------------------------------------------------

COMPILERS = {"nvcc": ["nvcc", "-O3", "-x", "cu"], "hipcc": ["hipcc", "-O3", "-x", "hip"]}


@pytest.fixture(scope="module", params=sorted(COMPILERS))
def gemm_binary(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    compiler = COMPILERS[request.param]
    if shutil.which(compiler[0]) is None:
        pytest.skip(f"{compiler[0]} is not installed")
    binary = tmp_path_factory.mktemp(request.param) / "gemm"
    source = PROFILING / "rocprof" / "hip-gemm" / "gemm.hip"
    done = subprocess.run([*compiler, "-o", str(binary), str(source)], capture_output=True,
                          text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return binary


@pytest.mark.parametrize("args, env, message", [
    (["0"], {}, "n '0' (from the command line) is not an integer in 1..16384"),
    (["16385"], {}, "is not an integer in 1..16384"),
    (["512", "x"], {}, "iters 'x' (from the command line)"),
    ([], {"AORTA_GEMM_ITERS": "-3"}, "iters '-3' (from $AORTA_GEMM_ITERS)"),
    (["1", "2", "3"], {}, "usage:"),
])
def test_gemm_refuses_bad_sizes_with_exit_2(gemm_binary: Path, args, env, message):
    done = run([str(gemm_binary), *args], env={**os.environ, **env})
    assert done.returncode == 2 and message in done.stderr, done.stderr


def test_gemm_reads_sizes_from_arguments_then_the_environment(gemm_binary: Path):
    env = {**os.environ, "AORTA_GEMM_N": "48", "AORTA_GEMM_ITERS": "4"}
    done = run([str(gemm_binary)], env=env)
    assert "gemm: n=48 iters=4 warmup=3 launches=7" in done.stdout
    done = run([str(gemm_binary), "32"], env=env)
    assert "gemm: n=32 iters=4 warmup=3 launches=7" in done.stdout
    if done.returncode == 2:            # no GPU here: a one-line reason, not a crash
        assert "gemm: cannot run here: no GPU" in done.stderr
    else:
        assert done.returncode == 0 and "gemm: PASS" in done.stdout, done.stdout + done.stderr
