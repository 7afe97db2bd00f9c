"""`aorta.base.tools.run_tool`: a host or profiler tool runs without a shell, in a session of
its own, under a timeout, with its output bounded; nothing it starts outlives the call and
no descriptor or zombie is left behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from aorta.base.tools import MAX_OUTPUT_BYTES, run_tool
from aorta_testing import session_leaver


def _py(code: str, timeout: float = 30, **kwargs: object):
    return run_tool([sys.executable, "-c", code], timeout, **kwargs)  # type: ignore[arg-type]


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_output_errors_and_exit_status_come_back_whole() -> None:
    # More than a pipe holds (64 KiB) on both streams at once.
    result = _py("import sys; sys.stdout.write('o' * 300000); sys.stderr.write('e' * 200000);"
                 "sys.exit(3)", merge_stderr=False)
    assert (len(result.output), set(result.output)) == (300000, {"o"})
    assert (len(result.errors), set(result.errors)) == (200000, {"e"})
    assert (result.returncode, result.problem, result.ok) == (3, "", False)


def test_stderr_comes_with_stdout_unless_asked_apart() -> None:
    result = _py("import sys; print('out', flush=True); print('err', file=sys.stderr)")
    assert (result.output, result.errors, result.ok) == ("out\nerr\n", "", True)


def test_a_tool_killed_by_a_signal_reports_it_as_popen_does() -> None:
    assert _py("import os, signal; os.kill(os.getpid(), signal.SIGTERM)").returncode == -15


def test_the_tool_runs_in_its_own_session_with_stdin_at_end_of_file() -> None:
    result = _py("import os, sys; print(os.getsid(0) == os.getpid(), repr(sys.stdin.read()))")
    assert result.output.split() == ["True", "''"]


def test_no_descriptor_is_inherited_and_none_is_left_open() -> None:
    before = _open_fds()
    leaked_r, leaked_w = os.pipe()
    os.set_inheritable(leaked_w, True)       # what a parent of aorta may have handed down
    try:
        result = _py("import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))")
    finally:
        os.close(leaked_r)
        os.close(leaked_w)
    assert result.output.strip() == "[0, 1, 2, 3]"   # 3: the listing's own descriptor
    assert _open_fds() == before


def test_a_missing_executable_is_a_problem_not_an_exception(tmp_path: Path) -> None:
    before = _open_fds()
    result = run_tool([str(tmp_path / "absent")], 5)
    assert result.returncode is None and not result.timed_out
    assert result.problem.startswith(f"could not start {tmp_path / 'absent'}: ")
    assert _open_fds() == before


def test_a_timeout_kills_the_whole_session_and_reaps_the_tool(tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    script = tmp_path / "slow"
    script.write_text(f"#!/bin/sh\necho started\nsleep 60 &\necho $! > {marker}\nsleep 60\n")
    script.chmod(0o755)
    started = time.monotonic()
    result = run_tool([str(script)], 0.5)
    assert 0.5 <= time.monotonic() - started < 10
    assert (result.returncode, result.timed_out) == (None, True)
    assert result.problem == f"{script} did not answer within 0.5 s"
    assert result.output == "started\n"
    grandchild = int(marker.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(grandchild)


def test_a_tool_that_closes_its_output_but_lingers_still_times_out() -> None:
    result = _py("import os, time; os.close(1); os.close(2); time.sleep(60)", timeout=0.5)
    assert result.timed_out


def test_a_tool_that_writes_without_end_is_stopped_not_held_in_memory() -> None:
    result = run_tool(["/bin/sh", "-c", "exec yes"], 60)
    assert result.returncode is None and not result.timed_out
    assert result.problem == f"/bin/sh wrote more than {MAX_OUTPUT_BYTES >> 20} MiB; its " \
                             f"answer was not read"
    assert len(result.output) <= MAX_OUTPUT_BYTES


def test_a_snapshot_tool_that_writes_without_end_is_recorded_not_read(tmp_path: Path) -> None:
    from aorta.host.health import _guarded
    from aorta.host.stack import tool_output

    script = tmp_path / "chatty"
    script.write_text("#!/bin/sh\nexec yes\n")
    script.chmod(0o755)
    found = _guarded(lambda: tool_output([str(script)]), "chatty")
    assert found == {"unavailable": f"{script} wrote more than 64 MiB; its answer was not read"}


def test_a_descendant_that_left_the_session_does_not_hold_the_call(tmp_path: Path) -> None:
    # It keeps the tool's stdout open for 30 s: output goes to a file, so nothing waits for it.
    script, marker = session_leaver(tmp_path)
    started = time.monotonic()
    result = run_tool([str(script)], 0.5)
    assert time.monotonic() - started < 10 and result.timed_out
    os.kill(int(marker.read_text()), 9)


def test_a_pipeline_inside_a_tool_ends_when_its_reader_does() -> None:
    # SIGPIPE back to its default (Popen's restore_signals): `yes` dies at once, quietly.
    started = time.monotonic()
    result = run_tool(["sh", "-c", "yes | head -n 1"], 30)
    assert (result.output, result.returncode) == ("y\n", 0)
    assert time.monotonic() - started < 5


def test_a_program_is_found_as_exec_finds_it(tmp_path: Path, monkeypatch) -> None:
    broken, working, here = tmp_path / "broken", tmp_path / "working", tmp_path / "cwd"
    for folder in (broken, working, here):
        folder.mkdir()
    (broken / "tool").write_text("#!/nonexistent/interpreter\n")
    (working / "tool").write_text("#!/bin/sh\necho from-path\n")
    (here / "tool").write_text("#!/bin/sh\necho from-cwd\n")
    for folder in (broken, working, here):
        (folder / "tool").chmod(0o755)
    monkeypatch.chdir(here)
    env = {"PATH": f"{broken}{os.pathsep}{working}"}
    # The first one cannot start (its interpreter is missing): the next one on PATH runs.
    assert run_tool(["tool"], 30, env=env).output == "from-path\n"
    # A bare name is never run from the working directory.
    assert run_tool(["tool"], 30, env={"PATH": str(tmp_path / "empty")}).problem
    assert run_tool(["./tool"], 30, env=env).output == "from-cwd\n"


def test_stdout_to_a_file_leaves_stderr_in_the_output(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    result = _py("import sys; print('a,b'); print('note', file=sys.stderr)", stdout_path=out)
    assert out.read_text() == "a,b\n" and result.output == "note\n"
