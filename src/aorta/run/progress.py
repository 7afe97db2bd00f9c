"""Showing a sweep's progress: a live bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any, TextIO

from aorta.run.stderr_line import quoted_stream
from aorta.store.layout import trial_log, trial_name
from aorta.store.records import TrialResult


class Progress:
    """What a sweep reports to; this one says nothing (`aorta.sweep` without `progress`)."""

    def start(self, total: int, already_done: int) -> None:
        pass

    def trial_started(self, cell: str, index: int, baseline: bool = False) -> None:
        pass

    def trial_done(self, result: TrialResult) -> None:
        pass

    def note(self, line: str) -> None:
        pass

    def close(self) -> None:
        pass


class PlainProgress(Progress):
    """One line per finished trial, for logs and CI."""

    def __init__(self, stream: TextIO, run_dir: Path | None = None, verbose: int = 0) -> None:
        self.stream, self.run_dir, self.verbose = stream, run_dir, verbose
        self.total = self.done = 0

    def start(self, total: int, already_done: int) -> None:
        self.total, self.done = total, already_done
        if already_done:
            self.note(rerun_line(total, already_done))

    def trial_done(self, result: TrialResult) -> None:
        self.done += 1
        wall = f"{result.wall_s:.2f}s" if result.wall_s is not None else "-"
        tail = "" if result.verdict == "pass" else f" ({result.reason})"
        print(f"[{self.done}/{self.total}] {result.cell}/{result.name} "
              f"{result.verdict} {wall}{tail}", file=self.stream, flush=True)
        for line in trial_details(result, self.run_dir, self.verbose):
            print(f"  {line}", file=self.stream, flush=True)

    def note(self, line: str) -> None:
        print(f"aorta: {line}", file=self.stream, flush=True)


class BarProgress(Progress):
    """A rich progress bar: cell, trial, elapsed, ETA."""

    def __init__(self, stream: TextIO, run_dir: Path | None = None, verbose: int = 0) -> None:
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                            console=Console(file=stream), transient=False)
        self.task: Any = None
        self.run_dir, self.verbose = run_dir, verbose

    def start(self, total: int, already_done: int) -> None:
        if already_done:
            self.note(rerun_line(total, already_done))
        if already_done < total:     # no bar for a rerun with nothing to run
            self.bar.start()
        self.task = self.bar.add_task("starting", total=total, completed=already_done)

    def trial_started(self, cell: str, index: int, baseline: bool = False) -> None:
        self.bar.update(self.task, description=f"{cell} {trial_name(index, baseline)}")

    def trial_done(self, result: TrialResult) -> None:
        if result.verdict != "pass":
            self.bar.console.print(f"{result.cell}/{result.name}: {result.verdict} "
                                   f"({result.reason})", markup=False)
        for line in trial_details(result, self.run_dir, self.verbose):
            self.bar.console.print(f"  {line}", markup=False, highlight=False)
        self.bar.advance(self.task)

    def note(self, line: str) -> None:
        self.bar.console.print(f"aorta: {line}", markup=False, highlight=False)

    def close(self) -> None:
        self.bar.stop()


def rerun_line(total: int, already_done: int) -> str:
    """What a rerun of a run directory does: finish it, or nothing at all."""
    if already_done >= total:
        return f"nothing to run: all {total} trial(s) already complete"
    return (f"resuming: {already_done} of {total} trial(s) already complete, "
            f"{total - already_done} to run")


def trial_details(result: TrialResult, run_dir: Path | None, verbose: int = 0) -> list[str]:
    """The lines under a finished trial's line: when it did not pass, the log that says why
    (stderr.log, or stdout.log when only it has a line to read), and with `verbose` what
    exactly ran. Values are the record's, so credentials are redacted."""
    lines = []
    if result.verdict != "pass" and result.launched and run_dir is not None:
        stream = quoted_stream(result.reason, result.stderr_tail)
        lines.append(f"{stream}: {run_dir / trial_log(result.cell, result.name, stream)}")
    if verbose:
        lines.append(f"argv: {shlex.join(result.argv)}")
        if result.env_overlay:
            lines.append("env: " + " ".join(f"{k}={shlex.quote(v)}"
                                            for k, v in sorted(result.env_overlay.items())))
        if result.env_unset:
            lines.append("unset: " + " ".join(result.env_unset))
        for name, capture in result.captures.items():
            lines.append(f"{name}: capture {capture.state}"
                         + (f" ({capture.reason})" if capture.reason else ""))
    return lines


def make_progress(stream: TextIO | None = None, run_dir: Path | None = None,
                  verbose: int = 0) -> Progress:
    """A bar on a terminal, plain lines otherwise. With `run_dir`, a trial that did not pass
    names its stderr.log; with `verbose`, every trial shows its launch (`trial_details`)."""
    stream = stream or sys.stderr
    if stream.isatty():
        return BarProgress(stream, run_dir, verbose)
    return PlainProgress(stream, run_dir, verbose)
