"""Finding and running profiler command-line tools (ncu, nsys, rocprofv3), and checking the host.

Every child process here runs without a shell, in its own session, under a timeout; on timeout
its whole process group is killed, so nothing outlives the call.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aorta.collectors.probes import find_binary, gpu_present
from aorta.early_tools import EarlyTools
from aorta.errors import SetupError
from aorta.tool_pipe import DRAIN_S

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

__all__ = [
    "ToolRun", "resolve_binary", "find_binary", "run_tool", "tool_version", "read_tail",
    "gpu_present", "counter_access", "host_counter_access", "CAP_SYS_ADMIN", "PERMISSION_FIX",
    "start_versions",
]

CAP_SYS_ADMIN = 21          # bit in /proc/<pid>/status CapEff
_PARAMS = Path("/proc/driver/nvidia/params")
_PROFILING_FLAG = re.compile(r"^RmProfilingAdminOnly:\s*(\d+)", re.MULTILINE)


@dataclass(frozen=True)
class ToolRun:
    """How a tool call ended. `returncode` is None when it timed out or could not start."""

    returncode: int | None
    output: str          # stderr (and stdout when not sent to a file), decoded
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def resolve_binary(env_var: str, default: str, env: Mapping[str, str], collector: str,
                   error: type[SetupError] = SetupError) -> str:
    """The profiler binary for a trial, or `error` naming both ways to provide one."""
    found = find_binary(env_var, default, env)
    if found:
        return found
    given = env.get(env_var, "").strip()
    if given:
        problem = f"${env_var}={given!r} is not an executable file on this machine"
    else:
        problem = f"${env_var} is not set and {default!r} is not on PATH"
    raise error(f"{collector}: {problem}; set {env_var} to the {default} binary or put {default} "
                f"on PATH, or remove {collector} from collect")


def start_versions(binaries: Sequence[str]) -> EarlyTools:
    """A block in which each binary's `--version` is already running for `tool_version`."""
    return EarlyTools([[binary, "--version"] for binary in binaries], _spawn_merged)


def _spawn_merged(argv: Sequence[str]) -> _SessionPopen:
    return _spawn(argv, None, None)


class _SessionPopen(subprocess.Popen[bytes]):
    """A tool started in a session of its own, stopped whole."""

    def stop(self) -> tuple[bytes | None, bytes | None]:
        """Kill the session (and the tool, should it have left it), take what is left on the
        pipes for up to `DRAIN_S`, then close them (a descendant that escaped the session may
        hold them as long as it lives) and reap the tool."""
        if self.poll() is None:
            for kill in (os.killpg, os.kill):
                try:
                    kill(self.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        try:
            return self.communicate(timeout=DRAIN_S)
        except subprocess.TimeoutExpired:
            for pipe in (self.stdout, self.stderr):
                if pipe is not None:
                    pipe.close()
            self.wait()
            return None, None


def _spawn(argv: Sequence[str], out_fh: BinaryIO | None,
           env: Mapping[str, str] | None) -> _SessionPopen:
    return _SessionPopen(list(argv), stdin=subprocess.DEVNULL,
                         stdout=out_fh if out_fh else subprocess.PIPE,
                         stderr=subprocess.STDOUT if out_fh is None else subprocess.PIPE,
                         env=dict(env) if env is not None else None, start_new_session=True)


def run_tool(argv: Sequence[str], timeout_s: float, stdout_path: Path | None = None,
             env: Mapping[str, str] | None = None) -> ToolRun:
    """Run `argv` (no shell) with a timeout. stdout goes to `stdout_path` when given, else it is
    returned with stderr in `ToolRun.output`. Never raises for the tool's own failures."""
    early = EarlyTools.take(_spawn_merged, argv) if stdout_path is None and env is None else None
    try:
        out_fh = open(stdout_path, "wb") if stdout_path is not None else None
    except OSError as exc:
        return ToolRun(None, f"could not write {stdout_path}: {exc}")
    try:
        proc = early or _spawn(argv, out_fh, env)
    except OSError as exc:
        if out_fh:
            out_fh.close()
        return ToolRun(None, f"could not start {argv[0]}: {exc}")
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return ToolRun(proc.returncode, _decode(err if out_fh else out))
    except subprocess.TimeoutExpired:
        read_out, read_err = proc.stop()
        return ToolRun(None, _decode(read_err if out_fh else read_out), timed_out=True)
    except BaseException:       # Ctrl-C while waiting: the tool and its session go too
        proc.stop()
        raise
    finally:
        if out_fh:
            out_fh.close()


def tool_version(binary: str, pattern: str, timeout_s: float = 30.0) -> str | None:
    """The version a `<binary> --version` prints, matched by `pattern`'s first group."""
    result = run_tool([binary, "--version"], timeout_s)
    match = re.search(pattern, result.output) if result.ok else None
    return match.group(1) if match else None


def read_tail(path: Path | None, limit: int = 65536) -> str:
    """The last `limit` bytes of a text file, decoded; '' when it cannot be read."""
    from aorta.store.reading import read_tail as tail

    return tail(path, limit) or ""


#: How to let a process read NVIDIA's performance counters (ncu's ERR_NVGPUCTRPERM).
PERMISSION_FIX = ("run as root (in a container: with CAP_SYS_ADMIN), or load the nvidia kernel "
                  "module with NVreg_RestrictProfilingToAdminUsers=0; see "
                  "https://developer.nvidia.com/ERR_NVGPUCTRPERM")


def counter_access(params_text: str | None, cap_eff_hex: str | None) -> tuple[bool | None, str]:
    """Can this process read GPU performance counters? (True / False / None: unknown, reason).

    The driver's `RmProfilingAdminOnly: 1` (`/proc/driver/nvidia/params`) admits only
    processes holding CAP_SYS_ADMIN (root outside a container, or a container given it);
    `0` admits everyone. Anything else is unknown until a run.
    """
    match = _PROFILING_FLAG.search(params_text or "")
    if match is None:
        return None, "counter permission unknown until a run (driver parameters unreadable)"
    if match.group(1) == "0":
        return True, "the driver lets every user read GPU performance counters"
    try:
        has_admin = bool(int(cap_eff_hex or "", 16) >> CAP_SYS_ADMIN & 1)
    except ValueError:
        return None, "counter permission unknown until a run (capabilities unreadable)"
    if has_admin:
        return True, ("counters are limited to admin users and this process has CAP_SYS_ADMIN; "
                      "confirmed only by a run")
    return False, ("the driver limits GPU performance counters to admin users "
                   "(RmProfilingAdminOnly: 1) and this process lacks CAP_SYS_ADMIN")


def host_counter_access() -> tuple[bool | None, str]:
    """`counter_access` for this process on this machine."""
    try:
        params = _PARAMS.read_text(errors="replace")
    except OSError:
        params = None
    try:
        status = Path("/proc/self/status").read_text(errors="replace")
        cap = re.search(r"^CapEff:\s*([0-9a-fA-F]+)", status, re.MULTILINE)
    except OSError:
        cap = None
    return counter_access(params, cap.group(1) if cap else None)


def _decode(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")
