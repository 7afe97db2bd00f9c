"""aorta's Proton launcher (`aorta.launchers.proton_run`) end to end on the CPU, against a
STAND-IN for Triton's profiler API.

These tests need no GPU and no Triton, and profile nothing. Each test writes a small fake
`triton` package into its tmp dir and puts it first on the child's PYTHONPATH (shadowing a real
Triton, if any). The fake `triton.profiler` has `start()` / `finalize()` / `_select_backend()`
with Triton 3.6's signatures and its `flags.command_line` switch (or, when asked, the older
`set_command_line()`); every call, with its arguments, is appended as one JSON line to the file
named by `$STANDIN_LOG`. The payloads append their own line there too, so the order (start,
payload, finalize) can be checked. What these tests prove is the launcher's control flow: which
Proton calls it makes, exactly once, and that the payload ends (exit status, messages,
`__main__` semantics) as under plain `python payload.py`. That a real Proton writes a real
capture this way is for tests/gpu/test_proton_gpu.py on a GPU.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.proton.collector import ProtonCollector
from aorta_testing import flat_metrics

PROTON = ProtonCollector()
CHILD_TIMEOUT_S = 60

STANDIN = {
    "triton/__init__.py": '__version__ = "0.0+standin"\n',
    "triton/profiler/__init__.py": """\
        \"\"\"Stand-in for Triton's profiler API in aorta's CPU tests: records calls, profiles
        nothing.\"\"\"
        from .profile import start, finalize
        """,
    "triton/profiler/flags.py": """\
        import os
        from dataclasses import dataclass

        if os.environ.get("STANDIN_OLD_FLAGS"):     # module-level switches, as older Tritons
            _command_line = False

            def set_command_line():
                global _command_line
                _command_line = True

            def is_command_line():
                return _command_line
        else:                                       # Triton 3.6's flags object
            @dataclass
            class ProfilerFlags:
                profiling_on: bool = False
                command_line: bool = False

            flags = ProfilerFlags()

            def is_command_line():
                return flags.command_line
        """,
    "triton/profiler/proton.py": """\
        from .profile import record
        record("cli_module_imported")
        """,
    "triton/profiler/profile.py": """\
        import json, os
        from .flags import is_command_line

        def record(call, **fields):
            with open(os.environ["STANDIN_LOG"], "a") as fh:
                fh.write(json.dumps({"call": call, "pid": os.getpid(), **fields}) + "\\n")

        def _select_backend():
            record("_select_backend")
            return "cupti"

        def _start(name, context, data, backend, mode, hook):
            if is_command_line():
                record("start_ignored", name=name)
                return None
            if os.environ.get("STANDIN_START_RAISES"):
                raise ValueError(os.environ["STANDIN_START_RAISES"])
            record("start", name=name, context=context, data=data, backend=backend, mode=mode,
                   hook=hook)
            _session["name"] = name
            return 0

        if os.environ.get("STANDIN_NO_MODE"):      # start() as Triton 3.2 and older had it
            def start(name=None, *, context="shadow", data="tree", backend=None, hook=None):
                return _start(name, context, data, backend, None, hook)
        else:                                       # Triton 3.6's start()
            def start(name=None, *, context="shadow", data="tree", backend=None, mode=None,
                      hook=None):
                return _start(name, context, data, backend, mode, hook)

        _session = {}

        def finalize(session=None, output_format=""):
            record("finalize", session=session, output_format=output_format)
            if os.environ.get("STANDIN_FINALIZE_RAISES"):
                raise RuntimeError("disk full")
            if os.environ.get("STANDIN_HATCHET"):     # a real capture, copied, for the engine
                with open(os.environ["STANDIN_HATCHET"], "rb") as src, \
                        open(_session["name"] + ".hatchet", "wb") as dst:
                    dst.write(src.read())
        """,
}

LOG_LINE = """\
    import json, os
    def log(call, **fields):
        with open(os.environ["STANDIN_LOG"], "a") as fh:
            fh.write(json.dumps({"call": call, **fields}) + "\\n")
    """


class Run:
    def __init__(self, code: int, stdout: str, stderr: str, calls: list[dict[str, Any]]) -> None:
        self.code, self.stdout, self.stderr, self.calls = code, stdout, stderr, calls

    @property
    def names(self) -> list[str]:
        return [c["call"] for c in self.calls]


@pytest.fixture
def standin(tmp_path: Path) -> Path:
    root = tmp_path / "standin"
    for name, text in STANDIN.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def child_env(tmp_path: Path, standin: Path | None, extra: dict[str, str] | None = None,
              ) -> dict[str, str]:
    """The caller's environment minus PYTHONPATH (the collector's overlay alone must make the
    launcher importable), with the stand-in on the path and the log file named."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if standin is not None:
        env["PYTHONPATH"] = str(standin)
    env["STANDIN_LOG"] = str(tmp_path / "calls.jsonl")
    return env | (extra or {})


def wrapped(argv: list[str], tmp_path: Path, env: dict[str, str],
            raw: dict[str, Any] | None = None) -> tuple[list[str], dict[str, str]]:
    out = tmp_path / "trial" / "proton"
    launch = PROTON.wrap(Launch(tuple(argv)), out, PROTON.validate(raw),
                         TrialContext("c", 0, out.parent, env))
    return list(launch.argv), {k: v for k, v in env.items() if k not in launch.unset} | \
        dict(launch.env)


def start_child(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(argv, env=env, cwd=cwd, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)


def finish(child: subprocess.Popen[str], log: Path) -> Run:
    try:
        stdout, stderr = child.communicate(timeout=CHILD_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        child.communicate(timeout=CHILD_TIMEOUT_S)
        raise
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    log.unlink(missing_ok=True)
    return Run(child.returncode, stdout, stderr, calls)


def run_launched(tmp_path: Path, standin: Path | None, argv: list[str],
                 raw: dict[str, Any] | None = None, extra: dict[str, str] | None = None,
                 cwd: Path | None = None) -> Run:
    env = child_env(tmp_path, standin, extra)
    command, full_env = wrapped(argv, tmp_path, env, raw)
    return finish(start_child(command, full_env, cwd or tmp_path), tmp_path / "calls.jsonl")


def run_plain(tmp_path: Path, argv: list[str], cwd: Path | None = None) -> Run:
    env = child_env(tmp_path, None)
    return finish(start_child(argv, env, cwd or tmp_path), tmp_path / "calls.jsonl")


def write(tmp_path: Path, body: str, name: str = "payload.py") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(LOG_LINE) + textwrap.dedent(body))
    return path


# --- how the payload ends ----------------------------------------------------------------------

ENDINGS = {
    "return": ("log('payload')\n", 0),
    "sys.exit(0)": ("import sys\nlog('payload')\nsys.exit(0)\n", 0),
    "sys.exit(3)": ("import sys\nlog('payload')\nsys.exit(3)\n", 3),
    "sys.exit(main())": ("import sys\ndef main():\n    log('payload')\n    return 4\n"
                         "if __name__ == '__main__':\n    sys.exit(main())\n", 4),
    "sys.exit('msg')": ("import sys\nlog('payload')\nsys.exit('payload says no')\n", 1),
    "exception": ("log('payload')\ndef inner():\n    raise RuntimeError('boom')\ninner()\n", 1),
    "raise KeyboardInterrupt": ("log('payload')\nraise KeyboardInterrupt\n", -signal.SIGINT),
}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_every_ending_finalizes_once_and_exits_as_python_would(tmp_path: Path, standin: Path,
                                                               ending: str) -> None:
    body, expected = ENDINGS[ending]
    script = write(tmp_path, body)
    launched = run_launched(tmp_path, standin, [sys.executable, script.name])
    plain = run_plain(tmp_path, [sys.executable, script.name])
    assert plain.code == expected                       # what the interpreter itself does
    assert launched.code == expected, launched.stderr
    assert launched.names == ["cli_module_imported", "_select_backend", "start", "payload",
                              "finalize"], launched.calls
    assert launched.stderr == plain.stderr              # the same message or traceback
    assert "proton_run" not in launched.stderr and "as_main" not in launched.stderr


def test_the_traceback_is_the_payloads_own(tmp_path: Path, standin: Path) -> None:
    script = write(tmp_path, ENDINGS["exception"][0])
    launched = run_launched(tmp_path, standin, [sys.executable, script.name])
    lines = launched.stderr.strip().splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert lines[1].startswith(f'  File "{script}", line ')
    assert lines[-1] == "RuntimeError: boom"


def sleeper(tmp_path: Path, extra: str = "") -> Path:
    return write(tmp_path, textwrap.dedent(extra) + textwrap.dedent("""\
        import time
        log('payload')
        print('ready', flush=True)
        time.sleep(60)
        log('not interrupted')
        """))


def interrupt(tmp_path: Path, standin: Path | None, script: Path, sig: signal.Signals,
              launched: bool = True) -> Run:
    env = child_env(tmp_path, standin)
    argv = [sys.executable, script.name]
    if launched:
        argv, env = wrapped(argv, tmp_path, env)
    child = start_child(argv, env, tmp_path)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    child.send_signal(sig)
    return finish(child, tmp_path / "calls.jsonl")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_finalizes_once_then_kills_as_without_us(tmp_path: Path, standin: Path,
                                                          sig: signal.Signals) -> None:
    script = sleeper(tmp_path)
    plain = interrupt(tmp_path, None, script, sig, launched=False)
    launched = interrupt(tmp_path, standin, script, sig)
    assert plain.code == launched.code == -sig, launched.stderr
    assert launched.names == ["cli_module_imported", "_select_backend", "start", "payload",
                              "finalize"]
    if sig == signal.SIGINT:   # the KeyboardInterrupt traceback, ending where the payload was
        assert launched.stderr.strip().splitlines()[-1] == "KeyboardInterrupt"
        assert "proton_run" not in launched.stderr


def test_a_payloads_own_sigterm_handler_is_kept(tmp_path: Path, standin: Path) -> None:
    script = sleeper(tmp_path, """\
        import signal, sys
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(7))
        """)
    launched = interrupt(tmp_path, standin, script, signal.SIGTERM)
    assert launched.code == 7
    assert launched.names[-2:] == ["payload", "finalize"]


@pytest.mark.parametrize("sig", [None, signal.SIGTERM], ids=["exit", "SIGTERM"])
def test_a_forked_child_never_finalizes(tmp_path: Path, standin: Path,
                                        sig: signal.Signals | None) -> None:
    """A fork of the payload (a DataLoader worker) inherits the session and the SIGTERM
    handler; only the process that started the session writes the capture."""
    script = write(tmp_path, """\
        import os, signal, sys, time
        child = os.fork()
        if child == 0:
            log('child')
            if len(sys.argv) > 1:
                time.sleep(60)
            sys.exit(5)               # runs to the launcher's end, as a script's fork would
        log('payload')
        if len(sys.argv) > 1:
            time.sleep(0.5)
            os.killpg(0, signal.SIGTERM)   # as aorta's timeout does: the whole group
            time.sleep(60)
        os.waitpid(child, 0)
        """)
    argv = [sys.executable, script.name] + (["--sleep"] if sig else [])
    env = child_env(tmp_path, standin)
    command, full_env = wrapped(argv, tmp_path, env)
    launched = finish(start_child(command, full_env, tmp_path), tmp_path / "calls.jsonl")
    assert launched.code == (-signal.SIGTERM if sig else 0), launched.stderr
    starts = [c for c in launched.calls if c["call"] == "start"]
    finals = [c for c in launched.calls if c["call"] == "finalize"]
    assert len(starts) == len(finals) == 1 and finals[0]["pid"] == starts[0]["pid"]
    assert {c["call"] for c in launched.calls} >= {"child", "payload"}


def test_a_failing_finalize_keeps_the_payloads_status(tmp_path: Path, standin: Path) -> None:
    script = write(tmp_path, ENDINGS["sys.exit(3)"][0])
    launched = run_launched(tmp_path, standin, [sys.executable, script.name],
                            extra={"STANDIN_FINALIZE_RAISES": "1"})
    assert launched.code == 3
    assert "aorta: proton: proton.finalize() failed: RuntimeError: disk full" in launched.stderr


# --- the session: what reaches proton.start() -------------------------------------------------

def test_options_reach_start_as_the_cli_would_pass_them(tmp_path: Path, standin: Path) -> None:
    script = write(tmp_path, ENDINGS["return"][0])
    launched = run_launched(tmp_path, standin, [sys.executable, script.name],
                            {"backend": "cupti", "backend_mode": "pcsampling", "hook": "triton",
                             "context": "python", "data": "trace"})
    assert launched.code == 0, launched.stderr
    assert "_select_backend" not in launched.names
    start = launched.calls[launched.names.index("start")]
    del start["pid"]
    assert start == {"call": "start", "name": str(tmp_path / "trial" / "proton" / "proton"),
                     "context": "python", "data": "trace", "backend": "cupti",
                     "mode": "pcsampling", "hook": "triton"}


def test_auto_lets_proton_pick_the_backend(tmp_path: Path, standin: Path) -> None:
    script = write(tmp_path, ENDINGS["return"][0])
    launched = run_launched(tmp_path, standin, [sys.executable, script.name])
    start = launched.calls[launched.names.index("start")]
    assert (start["backend"], start["mode"], start["hook"]) == ("cupti", None, None)


@pytest.mark.parametrize("old_flags", [False, True], ids=["flags-object", "set_command_line"])
def test_the_payloads_own_start_is_ignored_as_under_the_cli(tmp_path: Path, standin: Path,
                                                            old_flags: bool) -> None:
    script = write(tmp_path, """\
        import triton.profiler as proton
        assert proton.start("mine") is None
        proton.finalize()
        log('payload')
        """)
    launched = run_launched(tmp_path, standin, [sys.executable, script.name],
                            extra={"STANDIN_OLD_FLAGS": "1"} if old_flags else None)
    assert launched.code == 0, launched.stderr
    assert "command-line flag was not found" not in launched.stderr
    assert launched.names == ["cli_module_imported", "_select_backend", "start", "start_ignored",
                              "finalize", "payload", "finalize"]


@pytest.mark.parametrize(("extra", "raw", "why"), [
    ({"STANDIN_NO_MODE": "1"}, {"backend": "cupti", "backend_mode": "pcsampling"},
     "Triton 0.0+standin's proton.start() takes no mode, so --mode pcsampling cannot be "
     "honoured"),
    ({"STANDIN_START_RAISES": "Proton does not work when HIP_VISIBLE_DEVICES is set"}, None,
     "proton.start("),
])
def test_a_refused_session_runs_no_payload(tmp_path: Path, standin: Path, extra: dict[str, str],
                                           raw: dict[str, Any] | None, why: str) -> None:
    script = write(tmp_path, ENDINGS["return"][0])
    launched = run_launched(tmp_path, standin, [sys.executable, script.name], raw, extra)
    assert launched.code == 2
    assert "payload" not in launched.names and "finalize" not in launched.names
    assert launched.stderr.startswith("aorta: proton: the payload was not run: ")
    assert why in launched.stderr


@pytest.mark.skipif(importlib.util.find_spec("triton") is not None,
                    reason="a real Triton is importable here")
def test_without_triton_nothing_runs(tmp_path: Path) -> None:
    script = write(tmp_path, ENDINGS["return"][0])
    launched = run_launched(tmp_path, None, [sys.executable, script.name])
    assert launched.code == 2 and launched.calls == []
    assert "the payload was not run: cannot import triton.profiler with" in launched.stderr
    assert "aorta: proton: could not attach: cannot import triton.profiler with" \
        in launched.stderr


def test_a_missing_script_is_refused_before_triton_is_imported(tmp_path: Path,
                                                              standin: Path) -> None:
    launched = run_launched(tmp_path, standin, [sys.executable, "absent.py"])
    assert launched.code == 2 and launched.calls == []
    assert f"can't open file {str(tmp_path / 'absent.py')!r}" in launched.stderr


# --- __main__ semantics -----------------------------------------------------------------------

PROBE = """\
    import builtins, json, sys
    def annotated(x: int) -> None: ...
    print(json.dumps({
        "argv": sys.argv, "path0": sys.path[0], "file": __file__, "name": __name__,
        "spec": repr(__spec__), "package": __package__, "cached": __cached__,
        "loader": [type(__loader__).__name__, __loader__.name],
        "builtins_module": __builtins__ is builtins,
        "main_module": sys.modules["__main__"].__dict__ is globals(),
        "annotations_evaluated": annotated.__annotations__["x"] is int,
        "doc": __doc__,
    }))
    """


@pytest.mark.parametrize("how", ["relative", "absolute", "symlink", "other-cwd"])
def test_main_semantics_match_plain_python(tmp_path: Path, standin: Path, how: str) -> None:
    (tmp_path / "pkg").mkdir()
    script = write(tmp_path / "pkg", PROBE, "probe.py")
    cwd = tmp_path
    target = "pkg/probe.py"
    if how == "absolute":
        target = str(script)
    elif how == "symlink":
        (tmp_path / "link.py").symlink_to(script)
        target = "link.py"
    elif how == "other-cwd":
        cwd = tmp_path / "pkg"
        target = "probe.py"
    argv = [sys.executable, target, "--flag", "x y"]
    launched = run_launched(tmp_path, standin, argv, cwd=cwd)
    plain = run_plain(tmp_path, argv, cwd=cwd)
    assert launched.code == plain.code == 0, launched.stderr
    assert json.loads(launched.stdout) == json.loads(plain.stdout)


# --- pytest targets ---------------------------------------------------------------------------

@pytest.mark.parametrize(("test_body", "expected"), [("def test_ok():\n    log('payload')\n", 0),
                                                     ("def test_no():\n    log('payload')\n"
                                                      "    assert False\n", 1)])
def test_pytest_targets_keep_pytests_status(tmp_path: Path, standin: Path, test_body: str,
                                            expected: int) -> None:
    write(tmp_path, test_body, "test_target.py")
    launched = run_launched(tmp_path, standin,
                            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                             "test_target.py"])
    assert launched.code == expected, launched.stdout + launched.stderr
    assert launched.names[-2:] == ["payload", "finalize"]
    assert launched.names.count("finalize") == 1


def test_the_capture_and_outcome_read_together(tmp_path: Path, standin: Path) -> None:
    """A refused session leaves no capture, and the collector says why from stderr."""
    script = write(tmp_path, ENDINGS["return"][0])
    launched = run_launched(tmp_path, standin, [sys.executable, script.name], None,
                            {"STANDIN_START_RAISES": "no GPU"})
    stderr = tmp_path / "trial" / "stderr.log"
    stderr.parent.mkdir(parents=True, exist_ok=True)
    stderr.write_text(launched.stderr)
    metrics = PROTON.summarize(tmp_path / "trial" / "proton", PROTON.validate(None),
                               TrialOutcome(launched.code, None, False, True, stderr))
    assert metrics["proton_capture"] == "missing"
    assert metrics["proton_capture_reason"].startswith(
        "aorta's launcher did not run the payload: proton.start(")
    assert "ValueError: no GPU" in metrics["proton_capture_reason"]
    # Proton's refusal is a failed attach (the trial becomes an error), issue 14
    assert metrics["proton_attach_error"].startswith("proton.start(")
    assert "ValueError: no GPU" in metrics["proton_attach_error"]


def test_a_missing_script_is_not_a_failed_attach(tmp_path: Path, standin: Path) -> None:
    launched = run_launched(tmp_path, standin, [sys.executable, "absent.py"])
    stderr = tmp_path / "trial" / "stderr.log"
    stderr.parent.mkdir(parents=True, exist_ok=True)
    stderr.write_text(launched.stderr)
    metrics = PROTON.summarize(tmp_path / "trial" / "proton", PROTON.validate(None),
                               TrialOutcome(launched.code, None, False, True, stderr))
    assert metrics["proton_capture"] == "missing" and "proton_attach_error" not in metrics


# --- through the engine -----------------------------------------------------------------------

H200_TREE = Path(__file__).resolve().parents[1] / "fixtures" / "proton" / "h200" / "cli-tree"


def sweep_with_standin(tmp_path: Path, standin: Path, command: list[str],
                       *options: str) -> dict[str, Any]:
    """`aorta sweep run --collect proton -- COMMAND`; the one trial's result.json. The preflight
    is satisfied by package metadata for the stand-in (Triton 3.6.0) and a fake `nvidia-smi` in
    `tmp_path/bin`, which also holds any other fake tool the test put there."""
    meta = standin / "triton-3.6.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: triton\nVersion: 3.6.0\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'GPU 0: stand-in'\n")
    (bin_dir / "nvidia-smi").chmod(0o755)
    env = child_env(tmp_path, standin, {"STANDIN_HATCHET": str(H200_TREE / "proton.hatchet"),
                                        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    env["PYTHONPATH"] = os.pathsep.join([str(Path(__file__).resolve().parents[2] / "src"),
                                         str(standin)])
    done = subprocess.run([sys.executable, "-m", "aorta", "sweep", "run", "--collect", "proton",
                           "--trials", "1", "--output", str(tmp_path / "out"), *options, "--",
                           *command],
                          env=env, cwd=tmp_path, text=True, capture_output=True,
                          timeout=CHILD_TIMEOUT_S, check=False)
    results = list((tmp_path / "out").glob("*/cells/*/trial_*/result.json"))
    assert len(results) == 1, done.stderr
    result = dict(json.loads(results[0].read_text()))
    # a sweep whose only trial did not pass measured nothing: exit 3
    assert done.returncode == (0 if result["verdict"] == "pass" else 3), done.stderr
    return result


@pytest.mark.parametrize(("tail", "exit_code", "verdict"), [
    ("import sys\nsys.exit(0)\n", 0, "pass"),
    ("import sys\nsys.exit(3)\n", 3, "fail"),
    ("raise RuntimeError('boom')\n", 1, "fail"),
], ids=["sys.exit(0)", "sys.exit(3)", "raises"])
def test_aorta_sweep_run_with_the_standin(tmp_path: Path, standin: Path, tail: str,
                                          exit_code: int, verdict: str) -> None:
    """`aorta sweep run --collect proton` end to end, the engine's preflight satisfied by the
    stand-in (given package metadata) and a fake `nvidia-smi`; the stand-in's finalize() copies
    a real Triton 3.6.0 capture from an H200 (tests/fixtures/proton/h200/cli-tree) into place."""
    script = write(tmp_path, "log('payload')\n" + tail)
    result = sweep_with_standin(tmp_path, standin, [sys.executable, str(script)])
    assert (result["exit_code"], result["verdict"]) == (exit_code, verdict), result["reason"]
    assert result["argv"][1:3] == ["-m", "aorta.launchers.proton_run"]
    metrics = flat_metrics(result)
    assert metrics["proton_capture"] == "ok", metrics.get("proton_capture_reason")
    assert metrics["proton_kernel_count"] == 28          # what the H200 capture holds
    assert metrics["proton_triton_version"] == "3.6.0"
    log = (tmp_path / "calls.jsonl").read_text().splitlines()
    calls = [json.loads(line)["call"] for line in log]
    assert calls.count("finalize") == 1 and calls.index("payload") < calls.index("finalize")


def test_each_rank_writes_its_own_capture_through_the_shim(tmp_path: Path, standin: Path) -> None:
    """`srun -n 2 python payload.py` under `--collect proton`: aorta's per-rank shim fills each
    rank into the launcher's --name. The `srun` here is a two-line stand-in that starts the
    command twice with SLURM_PROCID 0 and 1."""
    srun = tmp_path / "bin" / "srun"
    srun.parent.mkdir()
    srun.write_text('#!/bin/sh\nshift 2\nSLURM_PROCID=0 "$@" & a=$!\n'
                    'SLURM_PROCID=1 "$@"; b=$?\nwait $a && exit $b\n')
    srun.chmod(0o755)
    script = write(tmp_path, "import sys\nlog('payload')\nsys.exit(0)\n")
    result = sweep_with_standin(tmp_path, standin, ["srun", "-n", "2", sys.executable,
                                                    str(script)])
    assert result["verdict"] == "pass", result["reason"]
    assert "aorta.launchers.per_rank" in result["argv"]
    assert "aorta.launchers.proton_run" in result["argv"]
    captures = sorted(p.name for p in Path(flat_metrics(result)["proton_artifact_dir"]).iterdir())
    assert captures == ["proton.rank0.hatchet", "proton.rank1.hatchet"]
    metrics = flat_metrics(result)
    assert metrics["proton_capture"] == "ok" and metrics["proton_rank_count"] == 2
    assert metrics["proton_kernel_count"] == 2 * 28


def test_the_trial_timeouts_sigterm_still_leaves_a_capture(tmp_path: Path, standin: Path) -> None:
    script = write(tmp_path, "import time\nlog('payload')\ntime.sleep(60)\n")
    result = sweep_with_standin(tmp_path, standin, [sys.executable, str(script)],
                                "--timeout", "5")
    assert (result["timed_out"], result["signal"], result["verdict"]) == \
        (True, signal.SIGTERM, "error"), result["reason"]
    assert flat_metrics(result)["proton_capture"] == "ok"
    assert flat_metrics(result)["proton_kernel_count"] == 28
