"""`python -m aorta.launchers.proton_run`: run a script (or pytest) inside one Proton session.
The session is the one Triton's CLI starts in `run_profiling()`, but finalized whatever ends the
script (Triton's skips it on `sys.exit()` up to 3.6 and on exceptions in 3.5, 3.6), and `--mode`
reaches `proton.start(mode=...)`. Sources: triton-lang/triton `third_party/proton/proton/`
`proton.py`, `profile.py`, `flags.py`. Endings and refusals: docs/collectors/proton.md.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import os
import signal
import sys
from types import FrameType, ModuleType
from typing import Any, NoReturn

from aorta.launchers.as_main import parse_target, run_then, script_problem
from aorta.launchers.attach import say_not_attached

EXIT_NOT_RUN = 2           # what `python missing.py` returns too
PREFIX = "aorta: proton:"


class NotRun(Exception):
    """The target cannot run inside a Proton session; it is not run at all. `attach` is
    False when the target itself is what cannot run (no such script, no pytest)."""

    def __init__(self, message: str, attach: bool = True) -> None:
        super().__init__(message)
        self.attach = attach


def _parse_args(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(prog="python -m aorta.launchers.proton_run",
                                     allow_abbrev=False)
    parser.add_argument("--name", required=True, help="session name: PATH.hatchet is written")
    parser.add_argument("--backend", help="cupti, roctracer, rocprofiler, instrumentation; "
                                          "absent: Proton's _select_backend() picks")
    parser.add_argument("--context", default="shadow")
    parser.add_argument("--data", default="tree")
    parser.add_argument("--mode", help="passed to proton.start(mode=...)")
    parser.add_argument("--hook", help="passed to proton.start(hook=...)")
    return parse_target(parser, argv)


def _load_proton(target: list[str], pytest: bool, mode: str | None) -> ModuleType:
    """`triton.profiler`, once the target is known to be runnable; `NotRun` otherwise."""
    if pytest:
        problem = None if importlib.util.find_spec("pytest") else "No module named pytest"
    else:
        problem = script_problem(target[0])
    if problem:
        raise NotRun(problem, attach=False)
    try:
        try:
            # Triton's CLI module first, as `python -m triton.profiler.proton` runs it, for
            # whatever it sets up when imported (nothing up to Triton 3.6).
            importlib.import_module("triton.profiler.proton")
        except ModuleNotFoundError as exc:
            if exc.name != "triton.profiler.proton":
                raise
        proton = importlib.import_module("triton.profiler")
    except ImportError as exc:
        raise NotRun(f"cannot import triton.profiler with {sys.executable}: {exc}") from None
    if mode is not None and not _accepts(proton.start, "mode"):
        version = getattr(sys.modules.get("triton"), "__version__", "?")
        raise NotRun(f"Triton {version}'s proton.start() takes no mode, so --mode {mode} cannot "
                     f"be honoured; drop backend_mode/instrumentation_mode/granularity or "
                     f"install a newer Triton")
    return proton


def _accepts(function: Any, name: str) -> bool:
    try:
        return name in inspect.signature(function).parameters
    except (TypeError, ValueError):     # no readable signature: let start() decide
        return True


class Session:
    """One Proton session around the target, finalized exactly once (also on SIGTERM)."""

    def __init__(self, proton: ModuleType) -> None:
        self.proton = proton
        self.state = "idle"             # idle -> running -> finalizing -> done
        self.term_pending = False
        self.pid = os.getpid()          # a forked child (a DataLoader worker) never finalizes

    def start(self, opts: argparse.Namespace) -> None:
        """`proton.start()` as Triton's `run_profiling()` calls it; `NotRun` when it refuses."""
        profile = sys.modules.get("triton.profiler.profile")
        select = getattr(profile, "_select_backend", None)
        normalize = getattr(profile, "_normalize_backend", None)    # newer CLIs normalise too
        backend = opts.backend
        try:
            if backend is None and callable(select):
                backend = select()
            if backend is not None and callable(normalize):
                backend = normalize(backend)
            kwargs: dict[str, Any] = {"context": opts.context, "data": opts.data,
                                      "backend": backend, "hook": opts.hook}
            if opts.mode is not None:
                kwargs["mode"] = opts.mode
            self.proton.start(opts.name, **kwargs)
        except Exception as exc:  # noqa: BLE001 - any refusal means the payload must not run
            raise NotRun(f"proton.start({opts.name!r}, backend={backend!r}) failed: "
                         f"{type(exc).__name__}: {exc}") from None
        self.state = "running"
        if not _enter_command_line_mode():
            print(f"{PREFIX} Proton's command-line flag was not found in this Triton; the "
                  f"payload's own proton.start() calls are not ignored", file=sys.stderr)

    def finish(self) -> None:
        """`proton.finalize()` once; a SIGTERM that arrives meanwhile takes effect after it."""
        if self.state != "running" or os.getpid() != self.pid:
            return
        self.state = "finalizing"
        try:
            self.proton.finalize()
        except Exception as exc:  # noqa: BLE001 - the payload's own outcome must survive
            print(f"{PREFIX} proton.finalize() failed: {type(exc).__name__}: {exc}",
                  file=sys.stderr)
        finally:
            self.state = "done"
        if self.term_pending:
            _die(signal.SIGTERM)

    def on_sigterm(self, signum: int, frame: FrameType | None) -> None:
        if self.state == "finalizing":
            self.term_pending = True
            return
        self.finish()
        _die(signal.SIGTERM)


def _enter_command_line_mode() -> bool:
    """Make the script's own `proton.start()` a no-op, as Proton's CLI does: `flags.command_line`
    on recent Tritons, `set_command_line()` on older ones; False when neither exists."""
    flags = sys.modules.get("triton.profiler.flags")
    holder = getattr(flags, "flags", None)
    if holder is not None and hasattr(holder, "command_line"):
        holder.command_line = True
        return True
    setter = getattr(flags, "set_command_line", None)
    if callable(setter):
        setter()
        return True
    return False


def _die(sig: signal.Signals) -> NoReturn:
    """End the process as `sig`'s default action would, after flushing what it printed."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream must not stop the exit
            pass
    signal.signal(sig, signal.SIG_DFL)
    os.kill(os.getpid(), sig)
    os._exit(128 + sig)     # not reached: the default action ends the process


def main(argv: list[str] | None = None) -> None:
    """Run the target inside the session; end the way the target ends (see the module doc)."""
    opts, target = _parse_args(sys.argv[1:] if argv is None else argv)
    try:
        session = Session(_load_proton(target, opts.pytest, opts.mode))
        session.start(opts)
    except NotRun as exc:
        print(f"{PREFIX} the payload was not run: {exc}", file=sys.stderr)
        if exc.attach:
            say_not_attached("proton", str(exc))
        raise SystemExit(EXIT_NOT_RUN) from None
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, session.on_sigterm)
    run_then(target, opts.pytest, session.finish, __file__)


if __name__ == "__main__":
    main()
