"""Running the host's and the profilers' command-line tools (nvidia-smi, ncu, rocprofv3, an
interpreter asked whether it can import torch): no shell, stdin from /dev/null, a session of
their own, a timeout. Output goes to temporary files, not pipes, so a descendant that left the
session cannot keep the caller waiting for a pipe's end, and a tool that writes without end is
stopped at `MAX_OUTPUT_BYTES`. However the call ends, the tool's whole session is killed.
"""

from __future__ import annotations

import errno
import os
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import IO

#: More than any tool asked here answers (nvidia-smi's queries of 8 GPUs: a few KiB; amd-smi's
#: JSON: hundreds of KiB). Not applied to a `stdout_path` the caller asked for.
MAX_OUTPUT_BYTES = 64 << 20


@dataclass(frozen=True)
class ToolRun:
    """How a tool call ended. `returncode` is None when the tool did not finish: `problem`
    then says why (it could not start, ran past its timeout, or wrote too much)."""

    returncode: int | None
    output: str = ""          # stdout, with stderr too unless asked apart
    errors: str = ""          # stderr, when asked apart
    problem: str = ""
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def run_tool(argv: Sequence[str], timeout_s: float, *, env: Mapping[str, str] | None = None,
             stdout_path: Path | None = None, merge_stderr: bool = True) -> ToolRun:
    """Run `argv` and wait at most `timeout_s` seconds. stdout goes to `stdout_path` when
    given (a new or regular file, never through a link; stderr is then returned in
    `output`), else it is returned; with `merge_stderr` false, stderr comes back apart in
    `errors`. A bare program name is looked up on the PATH of `env` (default: this
    process's), as exec does. Never raises for the tool's failures."""
    with ExitStack() as stack:
        try:
            out: IO[bytes] = stack.enter_context(
                _open_output(stdout_path) if stdout_path else tempfile.TemporaryFile())
        except OSError as exc:
            return ToolRun(None, problem=f"could not write {stdout_path}: {exc.strerror or exc}")
        err = out if merge_stderr and not stdout_path else \
            stack.enter_context(tempfile.TemporaryFile())
        try:
            proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                    env=dict(env) if env is not None else None,
                                    start_new_session=True)
        except OSError as exc:
            return ToolRun(None, problem=f"could not start {argv[0]}: {exc.strerror or exc}")
        answer = err if stdout_path else out           # what comes back as `output`
        apart = err if err is not out and not stdout_path else None
        try:
            problem, timed_out = _wait(proc, timeout_s, [f for f in (answer, apart) if f])
        finally:
            _kill_session(proc)
        text, errors = _read(answer), _read(apart) if apart else ""
    if problem:
        return ToolRun(None, text, errors, f"{argv[0]} {problem}", timed_out)
    return ToolRun(proc.returncode, text, errors)


def _open_output(path: Path) -> IO[bytes]:
    """`path` truncated for the tool's stdout; `OSError` for a link (ELOOP) or anything but a
    regular file, so a link planted there cannot aim the tool's output elsewhere."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC
                 | os.O_NONBLOCK, 0o666)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return os.fdopen(fd, "wb")


def _wait(proc: subprocess.Popen[bytes], timeout_s: float,
          captured: list[IO[bytes]]) -> tuple[str, bool]:
    """('', False) once the tool exits, else why it was stopped and whether that was the
    timeout. Polls often at first: most tools answer in milliseconds."""
    deadline = time.monotonic() + timeout_s
    pause = 0.002
    while True:
        try:
            proc.wait(timeout=max(0.0, min(pause, deadline - time.monotonic())))
            return "", False
        except subprocess.TimeoutExpired:
            pass
        if any(os.fstat(f.fileno()).st_size > MAX_OUTPUT_BYTES for f in captured):
            return f"wrote more than {MAX_OUTPUT_BYTES >> 20} MiB; its answer was not read", False
        if time.monotonic() >= deadline:
            return f"did not answer within {timeout_s:g} s", True
        pause = min(pause * 2, 0.1)


def _kill_session(proc: subprocess.Popen[bytes]) -> None:
    """Kill what is left of the tool's session, the tool first, then reap it. The session id
    stays the tool's pid while any member lives, so it names no other process."""
    proc.kill()                          # Popen's own: a no-op once the tool was reaped
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def _read(f: IO[bytes]) -> str:
    f.seek(0)
    return f.read(MAX_OUTPUT_BYTES).decode("utf-8", "replace")
