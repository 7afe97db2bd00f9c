"""Starting tools before their answer is asked for, so that several run at once.

`aorta collectors` starts the profilers' `--version` while NVML initialises; `aorta env` starts
nvidia-smi's two queries and `nvcc --version` together. A block started with `EarlyTools`
registers each process under its argv and the function that spawned it (the caller's own
pipes and modes); the next `take` with the same two gets the running process, to wait for
as if it had just started it. Leaving the block, by any way, kills (whole session) and reaps
whatever it started that is still running, taken or not (a Ctrl-C while a taken tool is being
waited for included), so nothing outlives it. A tool is a process object started in a
session of its own, with `pid`, `returncode`, `communicate()` and `stop()` (kill the session,
drain for a bounded time, reap): `aorta.tool_pipe.PipedTool`, or the collectors' Popen
(`tool_process`).
"""

from __future__ import annotations


TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, Protocol, TypeVar

    class Tool(Protocol):
        @property
        def pid(self) -> int: ...
        @property
        def returncode(self) -> int | None: ...
        def communicate(self, *, timeout: float | None = None) -> tuple[Any, Any]: ...
        def stop(self) -> tuple[Any, Any]: ...

    Spawn = Callable[[Sequence[str]], Tool]
    T = TypeVar("T", bound=Tool)

__all__ = ["EarlyTools"]


class EarlyTools:
    _started: dict[tuple[object, tuple[str, ...]], Tool] = {}

    def __init__(self, argvs: Sequence[Sequence[str]], spawn: Spawn) -> None:
        """`spawn(argv)` starts one tool in a session of its own (killed as a group)."""
        self.keys = [(spawn, tuple(argv)) for argv in argvs]
        self.procs: list[Tool] = []

    def __enter__(self) -> EarlyTools:
        for key in self.keys:
            if key not in self._started:
                spawn, argv = key
                try:
                    self._started[key] = proc = spawn(argv)
                except OSError:
                    continue     # the caller's own run tries again and says why
                self.procs.append(proc)
        return self

    def __exit__(self, *exc: object) -> None:
        for key in self.keys:
            self._started.pop(key, None)
        for proc in self.procs:
            if proc.returncode is None:     # not reaped yet: its pid is still its own
                proc.stop()

    @classmethod
    def take(cls, spawn: Callable[[Sequence[str]], T], argv: Sequence[str]) -> T | None:
        """The running tool `spawn` started for `argv` in an open block, now the caller's to
        wait for; None when there is none."""
        return cls._started.pop((spawn, tuple(argv)), None)  # type: ignore[return-value]
