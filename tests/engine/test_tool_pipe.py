"""`aorta.tool_pipe.PipedTool`, the subprocess-free runner of `aorta env`'s tools, does what
the `subprocess.Popen` calls it replaced did: output and errors piped back in full, the exit
status, stdin at end of file, no inherited descriptors, a session of its own that is killed
whole, and no zombie or open descriptor left behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from aorta.tool_pipe import PipedTool, ToolOverflow, ToolTimeout
from aorta_testing import session_leaver


def _py(code: str) -> PipedTool:
    return PipedTool(sys.executable, [sys.executable, "-c", code])


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_output_errors_and_exit_status_come_back_whole() -> None:
    # More than a pipe holds (64 KiB) on both streams at once: read together, no deadlock.
    tool = _py("import sys; sys.stdout.write('o' * 300000); sys.stderr.write('e' * 200000);"
               "sys.exit(3)")
    out, err = tool.communicate(timeout=30)
    assert (len(out), set(out), len(err), set(err)) == (300000, {ord("o")}, 200000, {ord("e")})
    assert tool.returncode == 3


def test_a_tool_killed_by_a_signal_reports_it_as_popen_does() -> None:
    tool = _py("import os, signal; os.kill(os.getpid(), signal.SIGTERM)")
    tool.communicate(timeout=30)
    assert tool.returncode == -15


def test_the_tool_runs_in_its_own_session_with_stdin_at_end_of_file() -> None:
    tool = _py("import os, sys; print(os.getsid(0) == os.getpid(), repr(sys.stdin.read()))")
    out, _ = tool.communicate(timeout=30)
    assert out.decode().split() == ["True", "''"]
    assert os.getsid(0) != tool.pid


def test_no_descriptor_is_inherited_and_none_is_left_open(tmp_path: Path) -> None:
    before = _open_fds()
    leaked_r, leaked_w = os.pipe()
    os.set_inheritable(leaked_w, True)       # what a parent of aorta may have handed down
    try:
        tool = _py("import os; print(sorted(int(f) for f in os.listdir('/proc/self/fd')))")
        out, _ = tool.communicate(timeout=30)
    finally:
        os.close(leaked_r)
        os.close(leaked_w)
    assert out.decode().strip() == "[0, 1, 2, 3]"   # 3: the listing's own descriptor
    assert _open_fds() == before


def test_a_missing_executable_raises_and_leaves_nothing_open(tmp_path: Path) -> None:
    before = _open_fds()
    with pytest.raises(FileNotFoundError):
        PipedTool(str(tmp_path / "absent"), ["absent"])
    assert _open_fds() == before


def test_a_timeout_keeps_what_was_read_and_the_kill_takes_the_whole_session(
        tmp_path: Path) -> None:
    marker = tmp_path / "grandchild.pid"
    script = tmp_path / "slow"
    script.write_text(f"#!/bin/sh\necho started\nsleep 60 &\necho $! > {marker}\nsleep 60\n")
    script.chmod(0o755)
    tool = PipedTool(str(script), [str(script)])
    started = time.monotonic()
    with pytest.raises(ToolTimeout) as raised:
        tool.communicate(timeout=0.5)
    assert 0.5 <= time.monotonic() - started < 10
    assert (raised.value.cmd, raised.value.timeout) == ([str(script)], 0.5)
    assert str(raised.value) == f"{script} did not answer within 0.5 s"
    tool.kill_session()
    out, _ = tool.communicate()
    assert out == b"started\n" and tool.returncode == -9
    grandchild = int(marker.read_text())
    deadline = time.monotonic() + 5
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not _alive(grandchild)
    assert not _alive(tool.pid)              # reaped, not a zombie


def test_a_tool_that_closes_its_output_but_lingers_still_times_out(tmp_path: Path) -> None:
    tool = _py("import os, time; os.close(1); os.close(2); time.sleep(60)")
    with pytest.raises(ToolTimeout):
        tool.communicate(timeout=0.5)
    tool.kill_session()
    tool.communicate()
    assert tool.returncode == -9 and not _alive(tool.pid)


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] not in "ZX"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_a_tool_that_writes_without_end_is_stopped_not_held_in_memory() -> None:
    tool = PipedTool("/bin/sh", ["yes-forever", "-c", "exec yes"], max_bytes=1 << 20)
    with pytest.raises(ToolOverflow, match="yes-forever wrote more than 1 MiB"):
        tool.communicate(timeout=30)
    tool.kill_session()
    out, _ = tool.communicate()              # drains what is left, keeps no more than the limit
    assert 0 < len(out) <= 1 << 20 and tool.returncode == -9


def test_a_snapshot_tool_that_writes_without_end_is_recorded_not_read(tmp_path: Path) -> None:
    from aorta.envsnap_health import _guarded
    from aorta.envsnap_stack import run_tool

    script = tmp_path / "chatty"
    script.write_text("#!/bin/sh\nexec yes\n")
    script.chmod(0o755)
    found = _guarded(lambda: run_tool([str(script)]), "chatty")
    assert found == {"unavailable": f"ToolOverflow: {script} wrote more than 64 MiB; its answer "
                                    f"was not read"}


def test_stopping_a_tool_whose_descendant_left_its_session_does_not_wait_for_it(
        tmp_path: Path) -> None:
    # The grandchild calls setsid: out of the killed session, it keeps the pipes open.
    script, marker = session_leaver(tmp_path)
    tool = PipedTool(str(script), [str(script)])
    with pytest.raises(ToolTimeout):
        tool.communicate(timeout=0.5)
    started = time.monotonic()
    tool.stop()
    assert time.monotonic() - started < 10 and tool.returncode == -9
    escaped = int(marker.read_text())
    assert _alive(escaped)                   # not aorta's to kill: it left the session
    os.kill(escaped, 9)


def test_a_pipeline_inside_a_tool_ends_when_its_reader_does() -> None:
    # SIGPIPE back to its default, as Popen's restore_signals: `yes` dies at once, quietly.
    tool = PipedTool("/bin/sh", ["sh", "-c", "yes | head -n 1"])
    started = time.monotonic()
    out, err = tool.communicate(timeout=30)
    assert (out, err, tool.returncode) == (b"y\n", b"", 0)
    assert time.monotonic() - started < 5


def test_a_program_is_found_as_exec_finds_it(tmp_path: Path, monkeypatch) -> None:
    from aorta.tool_pipe import start_on_path

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
    assert start_on_path(["tool"], env).communicate(timeout=30)[0] == b"from-path\n"
    # A bare name is never run from the working directory.
    with pytest.raises(FileNotFoundError):
        start_on_path(["tool"], {"PATH": str(tmp_path / "empty")})
    assert start_on_path(["./tool"], env).communicate(timeout=30)[0] == b"from-cwd\n"
