"""Signals that stop a sweep take Ctrl-C's path (docs/reliability.md, "Signals"). Only a
signal left at its default action is taken, and only in the main thread (the one Python lets
set handlers): a program calling `aorta.sweep` keeps its own handlers, `nohup` its SIGHUP.
Outside `armed()` (the trials) a signal waits until the records are written."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from aorta.base.errors import Interrupted

STOPPING = tuple(getattr(signal, name) for name in (
    "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2", "SIGALRM", "SIGXCPU", "SIGPWR")
    if hasattr(signal, name))


class SignalGuard:
    received: int | None = None
    raising = False

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self.received is None:      # a second signal (timeout sends two) stops nothing twice
            self.received = signum
            if self.raising:
                raise Interrupted(signum)

    @contextmanager
    def armed(self) -> Iterator[None]:
        """Within, a signal (or one that came before) raises `Interrupted` at once."""
        self.raising = True
        try:
            if self.received is not None:
                raise Interrupted(self.received)
            yield
        finally:
            self.raising = False


@contextmanager
def stopping_signals() -> Iterator[SignalGuard]:
    """A guard on the stopping signals while the block runs; one that came is raised last."""
    guard, taken = SignalGuard(), {}
    if threading.current_thread() is threading.main_thread():
        taken = {sig: signal.signal(sig, guard._on_signal) for sig in STOPPING
                 if signal.getsignal(sig) == signal.SIG_DFL}
    try:
        yield guard
    finally:
        for sig, handler in taken.items():
            signal.signal(sig, handler)
    if guard.received is not None:
        raise Interrupted(guard.received)
