"""A tool run with its output piped back, without the subprocess module.

`aorta env` asks nvidia-smi and nvcc what they are. `import subprocess` loads `locale` (and
with it `re`, `enum`, `functools`), `threading`, `selectors` and `signal`: on a 2-core machine
as long as a bare interpreter's whole start, more than the tools take to answer. `PipedTool`
is the part of `subprocess.Popen` those calls use, on `os.posix_spawn`: the tool in a session
of its own (so it can be killed with every process it starts), stdin from /dev/null, stdout
and stderr piped back, inheritable descriptors closed (as Popen's `close_fds`), SIGPIPE and
SIGXFSZ back to their defaults (as Popen's `restore_signals`: a pipeline inside a tool's
script must end when its reader does), `communicate(timeout)`, and `stop()`. `start_on_path`
finds the program as exec does, going on to the next one on PATH where one cannot start.
Imports only `select` and the signal numbers of `_signal` (the C module under `signal`,
loaded at every start; `signal` itself builds enums).
"""

from __future__ import annotations

import errno
import os
import select
import time

from aorta.pathsearch import which_all

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from signal import SIGKILL, SIGPIPE, SIGXFSZ
else:
    from _signal import SIGKILL, SIGPIPE, SIGXFSZ

__all__ = ["PipedTool", "ToolTimeout", "ToolOverflow", "MAX_ANSWER_BYTES", "start_on_path"]

_READ_BYTES = 1 << 16
#: More than any tool asked here answers (nvidia-smi's queries of 8 GPUs: a few KiB; amd-smi's
#: JSON: hundreds of KiB); a tool that writes on and on is stopped, not held in memory.
MAX_ANSWER_BYTES = 64 << 20
#: How long `stop` takes what is left on the pipes of a killed tool: a descendant that left
#: its session may hold them open for as long as it lives.
DRAIN_S = 2.0


class ToolTimeout(TimeoutError):
    """The tool did not finish within `timeout` seconds (it is still running: kill it)."""

    def __init__(self, cmd: Sequence[str], timeout: float) -> None:
        super().__init__(f"{cmd[0]} did not answer within {timeout:g} s")
        self.cmd = list(cmd)
        self.timeout = timeout


class ToolOverflow(RuntimeError):
    """The tool wrote more than its limit on one stream (it is still running: kill it)."""

    def __init__(self, cmd: Sequence[str], limit: int) -> None:
        super().__init__(f"{cmd[0]} wrote more than {limit >> 20} MiB; its answer was not read")
        self.cmd = list(cmd)
        self.limit = limit


class PipedTool:
    """`executable` started as `argv` in a session of its own. Raises OSError when it cannot
    start (no such file, not executable)."""

    def __init__(self, executable: str, argv: Sequence[str],
                 env: Mapping[str, str] | None = None,
                 max_bytes: int = MAX_ANSWER_BYTES) -> None:
        self.argv = list(argv)
        self.max_bytes = max_bytes
        self.returncode: int | None = None
        fds: list[int] = []
        try:
            fds += os.pipe()            # not inheritable (PEP 446): only the dup2 copies are
            fds += os.pipe()
            out_r, out_w, err_r, err_w = fds
            actions = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                       (os.POSIX_SPAWN_DUP2, out_w, 1), (os.POSIX_SPAWN_DUP2, err_w, 2)]
            actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_fds()]
            self.pid = os.posix_spawn(executable, self.argv,
                                      os.environ if env is None else env,
                                      file_actions=actions, setsid=True,
                                      setsigdef=(SIGPIPE, SIGXFSZ))
        except BaseException:
            for fd in fds:
                os.close(fd)
            raise
        os.close(out_w)
        os.close(err_w)
        self._chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
        self._sizes = {out_r: 0, err_r: 0}
        self._overflowed = False
        self._open = [out_r, err_r]

    def communicate(self, timeout: float | None = None) -> tuple[bytes, bytes]:
        """(stdout, stderr) once the tool has ended. Raises `ToolTimeout` after `timeout`
        seconds and `ToolOverflow` past `max_bytes` on a stream; what was read so far is kept
        for the next call (after a kill, which ends the tool's writing)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        poller = select.poll()
        for fd in self._open:
            poller.register(fd, select.POLLIN)
        while self._open:
            ready = poller.poll(None if deadline is None else
                                max(0.0, deadline - time.monotonic()) * 1000)
            if not ready and deadline is not None and time.monotonic() >= deadline:
                raise ToolTimeout(self.argv, timeout or 0.0)
            for fd, _ in ready:
                data = os.read(fd, _READ_BYTES)
                if data and self._sizes[fd] + len(data) > self.max_bytes:
                    if not self._overflowed:      # said once; later calls drain and drop
                        self._overflowed = True
                        raise ToolOverflow(self.argv, self.max_bytes)
                elif data:
                    self._chunks[fd].append(data)
                    self._sizes[fd] += len(data)
                else:                    # end of file: the tool and its children closed it
                    poller.unregister(fd)
                    self._open.remove(fd)
                    os.close(fd)
        self._wait(deadline, timeout)
        out, err = (b"".join(chunks) for chunks in self._chunks.values())
        return out, err

    def kill_session(self) -> None:
        """SIGKILL to the tool's whole session, and to the tool should it have left it, unless
        it has already been waited for (then its pid may be another process's)."""
        if self.returncode is None:
            for kill, pid in ((os.killpg, self.pid), (os.kill, self.pid)):
                try:
                    kill(pid, SIGKILL)
                except ProcessLookupError:
                    pass

    def stop(self) -> tuple[bytes, bytes]:
        """Kill the tool's session and reap the tool; (stdout, stderr) as far as read. What is
        left on the pipes is taken for up to `DRAIN_S`; after that they are closed, so a
        descendant that escaped the session cannot hold this call."""
        self.kill_session()
        self._overflowed = True          # past the limit now: dropped, not raised
        try:
            return self.communicate(timeout=DRAIN_S)
        except ToolTimeout:
            for fd in self._open:
                os.close(fd)
            self._open.clear()
            self._wait(None, None)       # killed: it ends at once
        out, err = (b"".join(chunks) for chunks in self._chunks.values())
        return out, err

    def _wait(self, deadline: float | None, timeout: float | None) -> None:
        delay = 0.0005               # a tool exits as it closes its output: rarely a second turn
        while self.returncode is None:
            pid, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
                return
            assert deadline is not None
            left = deadline - time.monotonic()
            if left <= 0:
                raise ToolTimeout(self.argv, timeout or 0.0)
            time.sleep(min(delay, left))
            delay = min(delay * 2, 0.05)


def start_on_path(argv: Sequence[str], env: Mapping[str, str] | None = None) -> PipedTool:
    """`PipedTool` of `argv`, its program found as exec finds it: a name with a slash as it is,
    else each executable of that name on PATH (`env`'s, else aorta's) in turn until one starts.
    Raises the first error other than "no such file" where none starts (FileNotFoundError when
    there is none on PATH), as Popen does."""
    if os.sep in argv[0]:
        return PipedTool(argv[0], argv, env)
    path = None if env is None else env.get("PATH", os.defpath)
    missing: OSError | None = None
    other: OSError | None = None
    for executable in which_all(argv[0], path):
        try:
            return PipedTool(executable, argv, env)
        except (FileNotFoundError, NotADirectoryError) as exc:   # e.g. a bad #! interpreter
            missing = missing or exc
        except OSError as exc:
            other = other or exc
    raise other or missing or FileNotFoundError(errno.ENOENT, "not found on PATH", argv[0])


def _inheritable_fds() -> list[int]:
    """The descriptors above 2 this process would hand to a child (those it inherited as
    inheritable), which Popen's close_fds closes; nothing where /proc is not mounted."""
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return []
    kept = []
    for fd in fds:
        try:
            if fd > 2 and os.get_inheritable(fd):
                kept.append(fd)
        except OSError:                  # the listing's own descriptor, closed by now
            continue
    return kept
