"""The cprofile collector: launch shapes, refusals, and reading real and broken dumps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.cprofile import CProfileCollector, CProfileOptions
from aorta.collectors.python_launch import split_python_launch
from aorta.errors import SetupError

C = CProfileCollector()
OK = TrialOutcome(exit_code=0, signal=None, timed_out=False, launched=True)


def wrap(argv, out=Path("/o")):
    ctx = TrialContext("c", 0, Path("/t"), {})
    return C.wrap(Launch(tuple(argv)), out, CProfileOptions(), ctx).argv


@pytest.mark.parametrize("argv, wrapped", [
    (["python3", "-u", "s.py", "a"], ("python3", "-u", "-m", "cProfile", "-o", "/o/profile.pstats", "s.py", "a")),
    (["python", "-m", "pytest", "-q"], ("python", "-m", "cProfile", "-o", "/o/profile.pstats", "-m", "pytest", "-q")),
    (["/usr/bin/python3.12", "-mpytest"], ("/usr/bin/python3.12", "-m", "cProfile", "-o", "/o/profile.pstats", "-m", "pytest")),
])
def test_wrap_shapes(argv, wrapped):
    assert wrap(argv) == wrapped


@pytest.mark.parametrize("argv, problem", [
    (["./bench"], "needs a Python script launch"),
    (["python3", "-c", "pass"], "cannot wrap the interpreter option '-c'"),
    (["python3", "-m", "timeit"], "cannot wrap 'python -m timeit'"),
    (["python3", "-m"], "'python -m' has no module name"),
    (["python3", "-u"], "needs a script path after the interpreter"),
    ([], "the command is empty"),
])
def test_refusals_name_the_problem(argv, problem):
    with pytest.raises(SetupError, match=problem):
        wrap(argv)


def test_bare_pytest_reads_the_interpreter_from_its_shebang(tmp_path: Path):
    fake = tmp_path / "pytest"
    fake.write_text("#!/usr/bin/env python3.11\n")
    fake.chmod(0o755)
    launch = split_python_launch([str(fake), "-x"], "c", "fix")
    assert (launch.python, launch.is_pytest, launch.args) == ("python3.11", True, ("-x",))


def test_summarize_a_real_dump(tmp_path: Path):
    script = tmp_path / "s.py"
    script.write_text("def f(n):\n    return sum(i * i for i in range(n))\nfor _ in range(3): f(20000)\n")
    out = tmp_path / "cprofile"
    out.mkdir()
    argv = wrap([sys.executable, str(script)], out)
    subprocess.run(argv, check=True, timeout=60)
    m = C.summarize(out, CProfileOptions(), OK)
    assert m["cprofile_capture"] == "ok"
    assert any("(f)" in name for name in m["cprofile_top_functions"])
    assert m["cprofile_call_count"] >= 3 * 20000
    cumulative = C.summarize(out, CProfileOptions(sort="cumulative"), OK)
    assert cumulative["cprofile_top_function_ms"] >= m["cprofile_top_function_ms"]


def test_missing_and_garbage_dumps_are_reported_not_raised(tmp_path: Path):
    m = C.summarize(tmp_path, CProfileOptions(), OK)
    assert m["cprofile_capture"] == "missing" and "killed" in m["cprofile_capture_reason"]
    never = TrialOutcome(None, None, False, False)
    assert "never started" in C.summarize(tmp_path, CProfileOptions(), never)["cprofile_capture_reason"]
    (tmp_path / "profile.pstats").write_bytes(b"\x00garbage")
    m = C.summarize(tmp_path, CProfileOptions(), OK)
    assert m["cprofile_capture"] == "unparsed" and "not a cProfile dump" in m["cprofile_capture_reason"]
    assert "cprofile_time_ms" not in m
