"""How Proton attaches: argv exactly as built (aorta's launcher under `mode: cli`), every launch
shape and refusal, env mode, devices."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.base import Launch, TrialContext
from aorta.base.source_tree import aorta_root
from aorta.collectors.proton.collector import ProtonCollector, ProtonWrapError, env_overlay
from aorta.collectors.proton.host import translate_devices
from aorta.collectors.proton.options import ProtonOptions
from aorta.base.errors import SetupError

PROTON = ProtonCollector()
OUT = Path("/runs/r/cells/c/trial_0/proton")
PAYLOAD = Path(__file__).resolve().parents[1] / "gpu" / "payloads" / "proton_vecadd.py"


def ctx(env: dict[str, str] | None = None) -> TrialContext:
    return TrialContext("c", 0, OUT.parent, env or {})


def wrap(argv: list[str], raw: dict[str, Any] | None = None, env: dict[str, str] | None = None,
         launch_env: dict[str, str] | None = None) -> Launch:
    launch = Launch(tuple(argv), launch_env or {})
    return PROTON.wrap(launch, OUT, PROTON.validate(raw), ctx(env))


def head(*flags: str, python: str = "python3") -> list[str]:
    return [python, *flags, "-m", "aorta.launchers.proton_run", "--name", f"{OUT}/proton"]


def child_path() -> dict[str, str]:
    """What the launch adds so the payload's Python imports the launcher from this checkout."""
    root = aorta_root()
    return {} if root is None else {"PYTHONPATH": root}


# --- mode: cli -------------------------------------------------------------------------------

def test_default_cli_argv() -> None:
    launch = wrap(["python3", "vecadd.py", "1048576", "10"])
    assert list(launch.argv) == head() + ["--context", "shadow", "--data", "tree",
                                          "--", "vecadd.py", "1048576", "10"]
    assert launch.env == child_path() and launch.unset == frozenset()


def test_every_flag_rendered_in_order() -> None:
    launch = wrap(["python3", "s.py", "--x"], {"backend": "instrumentation", "context": "python",
                                               "data": "trace", "instrumentation_mode": "mma",
                                               "granularity": "warp", "hook": "triton"})
    assert list(launch.argv) == head() + [
        "--backend", "instrumentation", "--context", "python", "--data", "trace",
        "--mode", "mma:granularity=warp", "--hook", "triton", "--", "s.py", "--x"]


def test_backend_mode_renders_mode() -> None:
    launch = wrap(["python", "s.py"], {"backend": "cupti", "backend_mode": "pcsampling"})
    assert list(launch.argv) == head(python="python") + [
        "--backend", "cupti", "--context", "shadow", "--data", "tree", "--mode", "pcsampling",
        "--", "s.py"]


def test_the_targets_own_dashes_stay_after_the_separator() -> None:
    launch = wrap(["python3", "s.py", "--", "--name", "x"])
    assert launch.argv[-5:] == ("--", "s.py", "--", "--name", "x")
    assert launch.argv.index("--") == len(launch.argv) - 5


def test_safe_interpreter_flags_stay_before_module() -> None:
    launch = wrap(["/usr/bin/python3.12", "-u", "-B", "-O", "s.py", "-v"])
    assert list(launch.argv[:6]) == ["/usr/bin/python3.12", "-u", "-B", "-O", "-m",
                                     "aorta.launchers.proton_run"]
    assert list(launch.argv[-3:]) == ["--", "s.py", "-v"]


@pytest.mark.parametrize("argv", [
    ["python3", "-m", "pytest", "-x", "tests/t.py"],
    ["python3", "-mpytest", "-x", "tests/t.py"],
])
def test_python_m_pytest_becomes_the_pytest_target(argv: list[str]) -> None:
    launch = wrap(argv)
    assert list(launch.argv) == head() + ["--context", "shadow", "--data", "tree",
                                          "--pytest", "--", "-x", "tests/t.py"]


def test_bare_pytest_runs_under_its_own_interpreter(tmp_path: Path) -> None:
    script = tmp_path / "pytest"
    script.write_text("#!/usr/bin/env python3.11\nimport pytest\n")
    script.chmod(0o755)
    launch = wrap([str(script), "-q"])
    assert launch.argv[:3] == ("python3.11", "-m", "aorta.launchers.proton_run")
    assert launch.argv[-3:] == ("--pytest", "--", "-q")


def test_aorta_proton_python_replaces_the_interpreter() -> None:
    launch = wrap(["python3", "-u", "s.py"], env={"AORTA_PROTON_PYTHON": "~/venv/bin/python"})
    expected = str(Path("~/venv/bin/python").expanduser())
    assert list(launch.argv[:4]) == [expected, "-u", "-m", "aorta.launchers.proton_run"]


def test_outer_overlay_is_kept() -> None:
    launch = wrap(["python3", "s.py"], launch_env={"OUTER": "1"})
    assert launch.env == {"OUTER": "1"} | child_path()


def test_the_source_tree_goes_first_on_the_childs_path() -> None:
    root = aorta_root()
    if root is None:
        pytest.skip("aorta is installed in a site directory: the child finds it by itself")
    launch = wrap(["python3", "s.py"], env={"PYTHONPATH": "/payload/lib"})
    assert launch.env["PYTHONPATH"] == os.pathsep.join([root, "/payload/lib"])


@pytest.mark.parametrize("flag", ["-I", "-E"])
def test_an_interpreter_that_ignores_pythonpath_is_refused_from_a_source_tree(flag: str) -> None:
    if aorta_root() is None:
        pytest.skip("aorta is installed in a site directory: -I and -E are harmless")
    with pytest.raises(ProtonWrapError) as caught:
        wrap(["python3", flag, "s.py"])
    message = str(caught.value)
    assert f"{flag} ignores PYTHONPATH" in message and "use mode: env" in message


@pytest.mark.parametrize(("argv", "problem"), [
    (["./hip_gemm", "512"], "needs a Python script launch"),
    (["python3", "-c", "print(1)"], "cannot wrap the interpreter option '-c'"),
    (["python3", "-m", "mypkg.train"], "cannot wrap 'python -m mypkg.train'"),
    (["python3", "-m"], "'python -m' has no module name"),
    (["python3"], "needs a script path after the interpreter"),
    (["python3", "-X", "dev", "s.py"], "cannot wrap the interpreter option '-X'"),
    ([], "the command is empty"),
])
def test_unwrappable_launches_name_mode_env(argv: list[str], problem: str) -> None:
    with pytest.raises(ProtonWrapError) as caught:
        wrap(argv)
    message = str(caught.value)
    assert message.startswith("proton: ") and problem in message
    assert "use mode: env instead" in message and "AORTA_PROTON_NAME" in message
    assert isinstance(caught.value, SetupError)


def test_roctracer_refusal_comes_before_the_launch_shape() -> None:
    # Validation refuses this pair already; wrap refuses it too, whatever the command.
    options = ProtonOptions.model_construct(**{**ProtonOptions().model_dump(),
                                               "backend": "roctracer"})
    with pytest.raises(ProtonWrapError) as caught:
        PROTON.wrap(Launch(("./native_binary",)), OUT, options, ctx())
    message = str(caught.value)
    assert "roctracer cannot be pinned under mode: cli" in message
    assert "_select_backend()" in message and "mode: env" in message
    assert "Python script launch" not in message


def test_wrap_touches_no_disk(tmp_path: Path) -> None:
    out = tmp_path / "never" / "proton"
    PROTON.wrap(Launch(("python3", "s.py")), out, PROTON.validate(None), ctx())
    assert not out.parent.exists()


# --- mode: env -------------------------------------------------------------------------------

def test_env_mode_leaves_argv_alone_and_sets_the_variables() -> None:
    launch = wrap(["./native", "--flag"], {"mode": "env"})
    assert launch.argv == ("./native", "--flag")
    assert launch.env == {"AORTA_PROTON_DIR": str(OUT), "AORTA_PROTON_NAME": f"{OUT}/proton",
                          "AORTA_PROTON_CONTEXT": "shadow", "AORTA_PROTON_DATA": "tree"}


@pytest.mark.parametrize(("raw", "extra"), [
    ({"backend": "cupti"}, {"AORTA_PROTON_BACKEND": "cupti"}),
    ({"backend": "roctracer", "backend_mode": "periodic_flushing"},
     {"AORTA_PROTON_BACKEND": "roctracer", "AORTA_PROTON_MODE": "periodic_flushing"}),
    ({"backend": "instrumentation", "granularity": "warp_2"},
     {"AORTA_PROTON_BACKEND": "instrumentation", "AORTA_PROTON_MODE": "default:granularity=warp_2"}),
    ({"hook": "triton", "context": "python", "data": "trace"},
     {"AORTA_PROTON_HOOK": "triton", "AORTA_PROTON_CONTEXT": "python", "AORTA_PROTON_DATA": "trace"}),
])
def test_env_mode_variables_mirror_the_cli_flags(raw: dict[str, str], extra: dict[str, str]) -> None:
    env = env_overlay(OUT, PROTON.validate({"mode": "env", **raw}))
    expected = {"AORTA_PROTON_DIR": str(OUT), "AORTA_PROTON_NAME": f"{OUT}/proton",
                "AORTA_PROTON_CONTEXT": "shadow", "AORTA_PROTON_DATA": "tree"}
    assert env == expected | extra


def test_env_mode_keeps_the_outer_overlay() -> None:
    launch = wrap(["./native"], {"mode": "env"}, launch_env={"ROCPROF": "1"})
    assert launch.env["ROCPROF"] == "1" and launch.env["AORTA_PROTON_DATA"] == "tree"


def test_the_gpu_payload_reads_every_variable_env_mode_sets() -> None:
    names = set()
    for raw in ({"mode": "env", "backend": "rocprofiler", "backend_mode": "pcsampling",
                 "hook": "triton"},):
        names |= set(env_overlay(OUT, PROTON.validate(raw)))
    source = PAYLOAD.read_text()
    for name in sorted(names):
        assert f'"{name}"' in source, name


def test_the_gpu_payload_imports_proton_before_torch() -> None:
    order = [alias.name for node in ast.parse(PAYLOAD.read_text()).body
             if isinstance(node, (ast.Import, ast.ImportFrom))
             for alias in (node.names if isinstance(node, ast.Import) else [ast.alias(node.module or "")])]
    assert order.index("triton.profiler") < order.index("torch")


# --- device variables ------------------------------------------------------------------------

HIP, CUDA, ROCR = "HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"


@pytest.mark.parametrize(("backend", "env", "sets", "unsets"), [
    # explicit AMD backends move every pin to ROCR
    ("rocprofiler", {HIP: "1"}, {ROCR: "1"}, {HIP}),
    ("rocprofiler", {CUDA: "2"}, {ROCR: "2"}, {CUDA}),
    ("roctracer", {HIP: "1", CUDA: "2"}, {ROCR: "1"}, {HIP, CUDA}),
    # an existing ROCR wins, even empty
    ("rocprofiler", {HIP: "1", ROCR: "3"}, {}, {HIP}),
    ("rocprofiler", {CUDA: "1", ROCR: ""}, {}, {CUDA}),
    # an empty pin is a pin (it hides every GPU)
    ("roctracer", {HIP: ""}, {ROCR: ""}, {HIP}),
    # auto: CUDA alone is an NVIDIA pin and stays; an AMD signal moves it
    ("auto", {CUDA: "0"}, {}, set()),
    ("auto", {CUDA: "0", HIP: "1"}, {ROCR: "1"}, {HIP, CUDA}),
    ("auto", {CUDA: "0", ROCR: "1"}, {}, {CUDA}),
    ("auto", {HIP: "5"}, {ROCR: "5"}, {HIP}),
    ("auto", {ROCR: "1"}, {}, set()),
    # backends that intercept no queue are never touched
    ("cupti", {CUDA: "0", HIP: "1"}, {}, set()),
    ("instrumentation", {HIP: "1"}, {}, set()),
    ("rocprofiler", {}, {}, set()),
])
def test_device_translation(backend: str, env: dict[str, str], sets: dict[str, str],
                            unsets: set[str]) -> None:
    devices = translate_devices(backend, env)
    assert (devices.set, devices.unset) == (sets, frozenset(unsets))
    assert bool(devices.note) == bool(unsets)


def test_device_note_says_what_changed() -> None:
    note = translate_devices("rocprofiler", {HIP: "0,1", ROCR: "2"}).note
    assert note == ("aorta: Proton's rocprofiler backend refuses HIP_/CUDA_VISIBLE_DEVICES on "
                    "AMD GPUs; unset HIP_VISIBLE_DEVICES='0,1' and kept "
                    "ROCR_VISIBLE_DEVICES='2', which wins")
    note = translate_devices("auto", {CUDA: "3", HIP: "1"}).note
    assert "unset HIP_VISIBLE_DEVICES='1' and CUDA_VISIBLE_DEVICES='3' and set " \
           "ROCR_VISIBLE_DEVICES='1' from HIP_VISIBLE_DEVICES" in note


@pytest.mark.parametrize("mode", ["cli", "env"])
def test_wrap_applies_the_translation_in_both_modes(mode: str) -> None:
    launch = wrap(["python3", "s.py"], {"mode": mode, "backend": "rocprofiler"},
                  env={HIP: "1", "PATH": "/usr/bin"})
    assert launch.env[ROCR] == "1" and launch.unset == frozenset({HIP})
    assert HIP not in launch.env


def test_wrap_reads_the_pins_an_outer_collector_left() -> None:
    launch = Launch(("python3", "s.py"), {HIP: "4"}, frozenset({CUDA}))
    out = PROTON.wrap(launch, OUT, PROTON.validate({"backend": "rocprofiler"}),
                      ctx({CUDA: "0"}))
    assert out.env == {ROCR: "4"} | child_path() and out.unset == frozenset({HIP, CUDA})


def test_an_nvidia_pin_is_left_alone_under_auto() -> None:
    launch = wrap([sys.executable, "s.py"], env={CUDA: "0"})
    assert launch.env == child_path() and launch.unset == frozenset()
