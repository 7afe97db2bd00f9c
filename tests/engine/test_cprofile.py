"""The cprofile collector: launch shapes, refusals, and reading real and broken dumps."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta.collectors.cprofile.collector import CProfileCollector, CProfileOptions
from aorta.collectors.python_launch import split_python_launch
from aorta.base.errors import SetupError

C = CProfileCollector()
OK = TrialOutcome(exit_code=0, signal=None, timed_out=False, launched=True)


def wrap(argv, out=Path("/o")):
    ctx = TrialContext("c", 0, Path("/t"), {})
    return C.wrap(Launch(tuple(argv)), out, CProfileOptions(), ctx).argv


@pytest.mark.parametrize("argv, wrapped", [
    (["python3", "-u", "s.py", "a"], ("python3", "-u", "-m", "aorta.launchers.cprofile_run", "--out", "/o/profile.pstats", "--", "s.py", "a")),
    (["python", "-m", "pytest", "-q"], ("python", "-m", "aorta.launchers.cprofile_run", "--out", "/o/profile.pstats", "--pytest", "--", "-q")),
    (["/usr/bin/python3.12", "-mpytest"], ("/usr/bin/python3.12", "-m", "aorta.launchers.cprofile_run", "--out", "/o/profile.pstats", "--pytest", "--")),
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
    assert (launch.python, launch.script is None, launch.args) == ("python3.11", True, ("-x",))


def test_summarize_a_real_dump(tmp_path: Path):
    script = tmp_path / "s.py"
    script.write_text("def f(n):\n    t = 0\n    for i in range(n):\n        t += i * i\n    return t\n"
                      "def sq(i):\n    return i * i\n"
                      "for _ in range(3): f(200000)\n[sq(i) for i in range(20000)]\n")
    out = tmp_path / "cprofile"
    out.mkdir()
    argv = wrap([sys.executable, str(script)], out)
    subprocess.run(argv, check=True, timeout=60)
    m = C.summarize(out, CProfileOptions(), OK)
    assert m["cprofile_capture"] == "ok"
    assert any(name.endswith("(f)") for name in m["cprofile_top_functions"]), m["cprofile_top_functions"]
    assert m["cprofile_call_count"] >= 20000 + 3
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


@pytest.mark.parametrize("body, code", [("import sys; sys.exit(3)", 3), ("raise KeyError('x')", 1),
                                        ("import sys; sys.exit('bye')", 1), ("pass", 0),
                                        ("import sys; sys.exit(0)", 0)])
def test_payload_exit_status_passes_through_and_dump_is_written(tmp_path: Path, body, code):
    script = tmp_path / "s.py"
    script.write_text("def g():\n    t = 0\n    for i in range(300000):\n        t += i\ng()\n"
                      + body + "\n")
    out = tmp_path / "cprofile"
    out.mkdir()
    proc = subprocess.run(wrap([sys.executable, str(script)], out), timeout=60,
                          capture_output=True, text=True)
    assert proc.returncode == code, proc.stderr
    m = C.summarize(out, CProfileOptions(), OK)
    assert m["cprofile_capture"] == "ok"
    assert m["cprofile_top_functions"][0].endswith("(g)"), m["cprofile_top_functions"]


def test_a_missing_script_exits_2_as_python_does_and_leaves_no_profile(tmp_path: Path):
    out = tmp_path / "cprofile"
    out.mkdir()
    ran = subprocess.run(wrap([sys.executable, str(tmp_path / "absent.py")], out),
                         capture_output=True, text=True, timeout=60)
    assert ran.returncode == 2
    assert ran.stderr == (f"aorta: cprofile: can't open file "
                          f"{str(tmp_path / 'absent.py')!r}: no such file\n")
    assert C.summarize(out, CProfileOptions(), OK)["cprofile_capture"] == "missing"


@pytest.mark.parametrize("code", [0, 3])
def test_a_dump_that_cannot_be_written_leaves_the_exit_status_to_the_payload(tmp_path: Path,
                                                                             code: int):
    """Issue 24: on a full disk the launcher's failed dump turned a pass into `exit code 1`."""
    script = tmp_path / "s.py"
    script.write_text(f"import sys; sys.exit({code})\n")
    out = tmp_path / "cprofile"
    (out / "profile.pstats").mkdir(parents=True)   # the dump cannot be written there
    ran = subprocess.run(wrap([sys.executable, str(script)], out), capture_output=True,
                         text=True, timeout=60)
    assert ran.returncode == code, ran.stderr
    assert ran.stderr.startswith(f"aorta: cprofile: could not write {out / 'profile.pstats'}: ")
    assert "Traceback" not in ran.stderr
    assert C.summarize(out, CProfileOptions(), OK)["cprofile_capture"] != "ok"
