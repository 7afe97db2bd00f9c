"""The torch launcher end to end on the CPU, with the real (CPU) PyTorch: each test writes a
payload, lets the collector wrap `python3 payload.py ...`, runs the wrapped argv in a real
child process and reads what the collector makes of the files the launcher left."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.torch.collector import TorchCollector
from aorta_testing import run_aorta, trial_result, write_recipe

pytestmark = pytest.mark.torch

TORCH = TorchCollector()
CHILD_TIMEOUT_S = 180
MATMUL = """\
    import sys
    import torch

    a = torch.randn(96, 96)
    for _ in range(3):
        b = a @ a
    print("payload done", tuple(b.shape) == (96, 96))
    """


class Ran:
    def __init__(self, code: int, stdout: str, stderr: str, out: Path,
                 metrics: dict[str, Any]) -> None:
        self.code, self.stdout, self.stderr, self.out, self.metrics = code, stdout, stderr, out, metrics


def base_env() -> dict[str, str]:
    """The caller's environment without PYTHONPATH: the collector's overlay alone must let the
    child import the launcher from this checkout."""
    return {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}


def run_wrapped(tmp_path: Path, argv: list[str], raw: dict[str, Any] | None = None,
                env: dict[str, str] | None = None) -> Ran:
    out = tmp_path / "trial" / "torch"
    out.mkdir(parents=True)
    opts = TORCH.validate(raw)
    base = env if env is not None else base_env()
    launch = TORCH.wrap(Launch(tuple(argv)), out, opts, TrialContext("c", 0, out.parent, base))
    child_env = {k: v for k, v in base.items() if k not in launch.unset} | dict(launch.env)
    child = subprocess.Popen(list(launch.argv), env=child_env, cwd=tmp_path, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             start_new_session=True)
    try:
        stdout, stderr = child.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate(timeout=30)
        raise
    stderr_path = out.parent / "stderr.log"
    stderr_path.write_text(stderr)
    outcome = TrialOutcome(child.returncode, None, False, True, stderr_path)
    return Ran(child.returncode, stdout, stderr, out, TORCH.summarize(out, opts, outcome))


@pytest.fixture
def script(payload: Callable[..., Path]) -> Callable[..., Path]:
    def make(tail: str = "", name: str = "payload.py") -> Path:
        return payload(textwrap.dedent(MATMUL) + tail, name)
    return make


def cpu_ops(trace: Path) -> list[dict[str, Any]]:
    events = json.loads(trace.read_text())["traceEvents"]
    return [e for e in events if e.get("cat") == "cpu_op"]


def test_matmul_trace_and_cpu_figures(tmp_path: Path, script: Callable[..., Path]) -> None:
    ran = run_wrapped(tmp_path, [sys.executable, str(script())])
    assert ran.code == 0, ran.stderr
    assert "payload done True" in ran.stdout
    ops = cpu_ops(ran.out / "trace.json")
    assert sum(op["name"] == "aten::mm" for op in ops) == 3
    summary = json.loads((ran.out / "summary.json").read_text())
    assert summary["errors"] == [] and "error" not in summary
    assert "cpu" in summary["activities"]
    assert "aten::mm" in (ran.out / "kernels.txt").read_text()
    m = ran.metrics
    if "torch_kernel_count" in m:      # a GPU build on a GPU machine: kernels instead
        pytest.skip("GPU kernels recorded; the GPU tests cover this machine")
    assert m["torch_capture"] == "ok", m.get("torch_capture_reason")
    assert m["torch_cpu_op_count"] == 4                 # randn and three matmuls, not their children
    assert 0 < m["torch_cpu_time_ms"] < sum(op["dur"] for op in ops) / 1e3
    assert {r["name"]: r["calls"] for r in m["torch_ops"]}["aten::mm"] == 3
    assert m["torch_activities"] == summary["activities"]
    assert m["torch_version"] == summary["torch_version"]


@pytest.mark.parametrize("tail, code, stderr_has", [
    ("sys.exit(3)\n", 3, None),
    ("sys.exit(0)\n", 0, None),
    ("sys.exit('the answer was wrong')\n", 1, "the answer was wrong"),
    ("raise ValueError('payload broke')\n", 1, "ValueError: payload broke"),
    ("raise KeyboardInterrupt\n", -signal.SIGINT, "KeyboardInterrupt"),
])
def test_exit_status_passes_through_and_the_trace_survives(
        tmp_path: Path, script: Callable[..., Path], tail: str, code: int,
        stderr_has: str | None) -> None:
    path = script(tail)
    ran = run_wrapped(tmp_path, [sys.executable, str(path)])
    native = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=CHILD_TIMEOUT_S)
    assert ran.code == native.returncode == code
    if stderr_has:
        assert stderr_has in ran.stderr and stderr_has in native.stderr
    assert (ran.out / "trace.json").is_file() and (ran.out / "summary.json").is_file()
    assert sum(op["name"] == "aten::mm" for op in cpu_ops(ran.out / "trace.json")) == 3
    assert ran.metrics["torch_capture"] == "ok"


def test_a_traceback_reads_as_without_the_launcher(tmp_path: Path,
                                                   script: Callable[..., Path]) -> None:
    path = script("def fail():\n    raise RuntimeError('deep')\nfail()\n")
    ran = run_wrapped(tmp_path, [sys.executable, str(path)])
    native = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True,
                            text=True, timeout=CHILD_TIMEOUT_S)
    tail = ran.stderr[ran.stderr.index("Traceback"):]
    assert tail == native.stderr[native.stderr.index("Traceback"):]
    assert "torch_profile" not in tail and "runpy" not in tail


def test_the_script_sees_what_python_script_py_gives_it(tmp_path: Path,
                                                         payload: Callable[..., Path]) -> None:
    probe = """\
        import json, os, sys
        import helper_module                      # next to the script, found via sys.path[0]
        print(json.dumps({"argv": sys.argv, "name": __name__, "file": __file__,
                          "path0": sys.path[0], "main": sys.modules["__main__"].__file__,
                          "helper": helper_module.VALUE}))
        """
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "helper_module.py").write_text("VALUE = 42\n")
    path = payload(probe, "sub/probe.py")
    argv = ["sub/probe.py", "--flag", "-x", "--", "tail"]
    ran = run_wrapped(tmp_path, [sys.executable, *argv])
    native = subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True, text=True,
                            timeout=CHILD_TIMEOUT_S, check=True)
    assert ran.code == 0, ran.stderr
    seen = json.loads(ran.stdout.splitlines()[-1])
    assert seen == json.loads(native.stdout.splitlines()[-1])
    assert seen == {"argv": argv, "name": "__main__", "file": str(path), "path0": str(sub),
                    "main": str(path), "helper": 42}


def test_pytest_launch_passes_its_exit_code(tmp_path: Path, payload: Callable[..., Path]) -> None:
    payload("""\
        import torch

        def test_passes():
            assert (torch.ones(3) @ torch.ones(3)).item() == 3

        def test_fails():
            assert torch.zeros(1).item() == 1
        """, "test_payload.py")
    ran = run_wrapped(tmp_path, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                                 "test_payload.py"])
    assert ran.code == 1, ran.stdout
    assert "1 failed, 1 passed" in ran.stdout
    assert ran.metrics["torch_capture"] == "ok"
    assert any(op["name"] == "aten::dot" for op in cpu_ops(ran.out / "trace.json"))
    passing = run_wrapped(tmp_path / "again", [sys.executable, "-m", "pytest", "-q", "-p",
                                               "no:cacheprovider", "-k", "passes",
                                               str(tmp_path / "test_payload.py")])
    assert passing.code == 0, passing.stdout


def test_a_payload_with_its_own_profiler_keeps_its_exit_status(
        tmp_path: Path, script: Callable[..., Path]) -> None:
    path = script(textwrap.dedent("""\
        with torch.profiler.profile() as own:
            torch.ones(3).add_(1)
        print("own rows", len(own.key_averages()) > 0)
        sys.exit(4)
        """))
    ran = run_wrapped(tmp_path, [sys.executable, str(path)])
    assert ran.code == 4, ran.stderr                      # not SIGSEGV from a lost session
    assert "own rows True" in ran.stdout
    assert ran.metrics["torch_capture"] == "missing"
    assert "ran its own torch.profiler session" in ran.metrics["torch_capture_reason"]


def test_a_missing_script_is_not_run(tmp_path: Path) -> None:
    ran = run_wrapped(tmp_path, [sys.executable, "no_such_payload.py"])
    assert ran.code == 2
    assert ran.metrics["torch_capture"] == "missing"
    assert "did not run the payload: can't open file" in ran.metrics["torch_capture_reason"]


def test_an_activity_the_build_lacks_stops_before_the_payload(
        tmp_path: Path, script: Callable[..., Path]) -> None:
    import torch

    if torch.version.cuda:
        pytest.skip("this torch is a CUDA build; 'hip' is the missing one here")
    marker = tmp_path / "ran"
    path = script(f"open({str(marker)!r}, 'w').close()\n")
    ran = run_wrapped(tmp_path, [sys.executable, str(path)], {"activities": "cpu,cuda"})
    assert ran.code == 2 and not marker.exists()
    assert "activity 'cuda' needs a cuda build of torch" in ran.metrics["torch_capture_reason"]
    assert "activity 'cuda' needs a cuda build" in ran.stderr


def test_without_aorta_importable_the_reason_says_so(tmp_path: Path,
                                                     script: Callable[..., Path]) -> None:
    # -I ignores PYTHONPATH; the checkout is then unreachable, so wrap refuses up front.
    from aorta.base.errors import SetupError

    with pytest.raises(SetupError, match="ignores PYTHONPATH"):
        run_wrapped(tmp_path, [sys.executable, "-I", str(script())])


def test_env_mode_payload_runs_the_profiler_with_a_schedule(tmp_path: Path,
                                                            payload: Callable[..., Path]) -> None:
    path = payload("""\
        import contextlib
        import torch
        from aorta.launchers.torch_profile import profiler_from_env

        a = torch.randn(32, 32)
        with profiler_from_env() or contextlib.nullcontext() as prof:
            for step in range(10):
                torch.mm(a, a)
                if prof is not None:
                    prof.step()
        """)
    raw = {"mode": "env", "activities": "cpu",
           "schedule": {"wait": 1, "warmup": 1, "active": 2, "repeat": 2}}
    env = base_env() | {"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    ran = run_wrapped(tmp_path, [sys.executable, str(path)], raw, env)
    assert ran.code == 0, ran.stderr
    assert sorted(p.name for p in ran.out.glob("trace*.json")) == ["trace.2.json", "trace.json"]
    for trace in ("trace.json", "trace.2.json"):
        assert sum(op["name"] == "aten::mm" for op in cpu_ops(ran.out / trace)) == 2
    m = ran.metrics
    assert m["torch_capture"] == "ok"
    assert m["torch_cpu_op_count"] == 4                 # 2 active steps x 2 cycles
    assert {r["name"]: r["calls"] for r in m["torch_ops"]}["aten::mm"] == 4


def test_env_mode_payload_that_exports_nothing(tmp_path: Path, script: Callable[..., Path]) -> None:
    ran = run_wrapped(tmp_path, [sys.executable, str(script())], {"mode": "env"})
    assert ran.code == 0
    assert ran.metrics["torch_capture"] == "missing"
    assert "$AORTA_TORCH_TRACE" in ran.metrics["torch_capture_reason"]


def test_through_aorta_sweep_run(tmp_path: Path, script: Callable[..., Path]) -> None:
    recipe = write_recipe(tmp_path, """\
        schema_version: 1
        mode: probe
        ticket: torch-cpu
        trials: 1
        timeout_per_trial: 170
        collect:
          torch: {activities: cpu, record_shapes: true}
        """)
    path = script("sys.exit(int(sys.argv[1]))\n")
    done = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "out"),
                     "--", sys.executable, str(path), "5", cwd=tmp_path, timeout=CHILD_TIMEOUT_S)
    assert done.returncode == 3, done.stderr     # its only trial failed: nothing measured
    result = trial_result(tmp_path / "out" / "torch-cpu", "default", 0)
    assert (result["verdict"], result["exit_code"]) == ("fail", 5)
    assert result["argv"][1:3] == ["-m", "aorta.launchers.torch_profile"]
    assert "--record-shapes" in result["argv"]
    m = result["metrics"]
    assert result["captures"]["torch"]["state"] == "ok", result["captures"]["torch"]
    assert m["torch_cpu_op_count"] == 4 and m["torch_activities"] == ["cpu"]
    trace = Path(m["torch_artifact_dir"]) / "trace.json"
    assert any("Input Dims" in op.get("args", {}) for op in cpu_ops(trace))


def test_env_mode_without_schedule_writes_one_trace_at_exit(
        tmp_path: Path, payload: Callable[..., Path]) -> None:
    path = payload("""\
        import contextlib
        import torch
        from aorta.launchers.torch_profile import profiler_from_env

        with profiler_from_env() or contextlib.nullcontext():
            torch.ones(8) @ torch.ones(8)
        """)
    env = base_env() | {"PYTHONPATH": str(Path(__file__).resolve().parents[2] / "src")}
    ran = run_wrapped(tmp_path, [sys.executable, str(path)], {"mode": "env", "activities": "cpu"},
                      env)
    assert ran.code == 0, ran.stderr
    assert [p.name for p in ran.out.glob("trace*.json")] == ["trace.json"]
    assert ran.metrics["torch_capture"] == "ok" and ran.metrics["torch_cpu_op_count"] == 3


def test_a_gzipped_tensorboard_trace_alone_is_read_through_aorta_sweep_run(
        tmp_path: Path, payload: Callable[..., Path]) -> None:
    """`tensorboard_trace_handler(use_gzip=True)` writes only `*.pt.trace.json.gz`."""
    path = payload("""\
        import os
        import torch
        from torch.profiler import ProfilerActivity, profile, tensorboard_trace_handler

        handler = tensorboard_trace_handler(os.environ["AORTA_TORCH_DIR"], use_gzip=True)
        with profile(activities=[ProfilerActivity.CPU], on_trace_ready=handler):
            a = torch.randn(32, 32)
            for _ in range(3):
                torch.mm(a, a)
        """)
    recipe = write_recipe(tmp_path, """\
        schema_version: 1
        mode: probe
        ticket: torch-gz
        trials: 1
        timeout_per_trial: 170
        collect:
          torch: {mode: env, activities: cpu}
        """)
    done = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "out"),
                     "--", sys.executable, str(path), cwd=tmp_path, timeout=CHILD_TIMEOUT_S)
    assert done.returncode == 0, done.stderr
    result = trial_result(tmp_path / "out" / "torch-gz", "default", 0)
    traces = [p.name for p in Path(result["metrics"]["torch_artifact_dir"]).iterdir()]
    assert len(traces) == 1 and traces[0].endswith(".pt.trace.json.gz")
    assert result["captures"]["torch"]["state"] == "ok", result["captures"]["torch"]
    assert {r["name"]: r["calls"] for r in result["metrics"]["torch_ops"]}["aten::mm"] == 3


def test_the_launchers_future_imports_do_not_reach_the_payload(tmp_path: Path,
                                                                script: Callable[..., Path]
                                                                ) -> None:
    """The launcher module uses `from __future__ import annotations`; the payload must not
    inherit it (its annotations stay objects, as under plain `python`)."""
    path = script("def f(x: int) -> int:\n    return x\n"
                  "assert f.__annotations__['x'] is int, f.__annotations__\n")
    ran = run_wrapped(tmp_path, [sys.executable, str(path)])
    assert ran.code == 0, ran.stderr
