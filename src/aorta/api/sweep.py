"""Running a sweep from Python (docs/api.md): `aorta.sweep(...)` does what `aorta sweep run`
does and returns the run it wrote; `aorta.plan(...)` checks everything and writes nothing.
"""

from __future__ import annotations

import functools
import os
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from os import PathLike
from pathlib import Path
from typing import Any, ParamSpec, TextIO, TypeVar

from pydantic import ConfigDict, SkipValidation, ValidationError, validate_call

from aorta.api.run import Run, open_run
from aorta.base.errors import UserError, doing, filesystem_error
from aorta.base.names import printable
from aorta.base.schema_errors import format_validation_error
from aorta.run.overrides import Overrides, parse_collect_flag
from aorta.run.prepare import PreparedSweep, prepare
from aorta.run.progress import Progress, make_progress

Command = str | Sequence[str]
Collect = str | Sequence[str] | None
P = ParamSpec("P")
R = TypeVar("R")


def _typed(func: Callable[P, R]) -> Callable[P, R]:
    """`func` with its arguments checked against its annotations first, strictly (no `"3"`
    for 3, no True for 1): a wrong one is a `UserError` naming it, as a bad flag is on the
    command line, before anything is read or written."""
    checked = validate_call(config=ConfigDict(strict=True, arbitrary_types_allowed=True))(func)

    @functools.wraps(func)
    def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return checked(*args, **kwargs)
        except ValidationError as exc:
            if exc.title != func.__name__:     # raised inside, not about the arguments
                raise
            raise UserError(f"aorta.{func.__name__}: {format_validation_error(exc)}") from None
        except OSError as exc:   # one the library did not put in words itself
            raise filesystem_error(exc, f"aorta.{func.__name__} failed on") or exc
    return call


@_typed
def plan(recipe: str | PathLike[str] | None = None, *, command: Command = (),
         output: str | PathLike[str] = "aorta_results", collect: Collect = None,
         trials: int | None = None, timeout: float | None = None, ticket: str | None = None,
         env_passthrough_mode: str | None = None, stop_after_events: int | None = None,
         max_trials: int | None = None, gpus: str | Sequence[str | int] | None = None,
         executor: str | None = None, skip_remote_probe: bool = False,
         baseline: bool | None = None, env: Mapping[str, str] | None = None) -> PreparedSweep:
    """Check a sweep as `aorta sweep plan` does and return it prepared (`.plan_lines()`,
    `.plan`); nothing runs or is written. The arguments are the command's flags (docs/api.md):
    `command` the payload's argv (a string is split as a shell would, never run by one),
    `collect` collector names or "none" (it replaces the recipe's list), `trials`, `timeout`
    (s), `ticket`, `env_passthrough_mode`, `stop_after_events`, `max_trials`, `gpus`,
    `executor`, `skip_remote_probe`, `baseline`; `env` the environment trials start from
    (default: this process's, copied, never changed). Raises `aorta.base.errors.UserError`
    with the command's message for a bad recipe or argument, or a collector that cannot
    measure here."""
    try:
        words = shlex.split(command) if isinstance(command, str) else tuple(command)
    except ValueError as exc:       # an unclosed quote
        raise UserError(f"aorta.plan: command: {exc}") from None
    names = None if collect is None else \
        parse_collect_flag(collect if isinstance(collect, str) else ",".join(collect))
    if gpus is not None and not isinstance(gpus, str):
        gpus = ",".join(str(g) for g in gpus)
    overrides = Overrides(command=tuple(words) or None, trials=trials, timeout=timeout,
                          collect=names, gpus=gpus, executor=executor, baseline=baseline,
                          ticket=ticket, env_mode=env_passthrough_mode,
                          stop_after_events=stop_after_events, max_trials=max_trials,
                          skip_remote_probe=skip_remote_probe)
    caller_env = dict(os.environ if env is None else env)
    bad = next((k for k, v in caller_env.items() if not k or "=" in k or "\0" in k + v), None)
    if bad is not None:
        raise UserError(f"aorta.plan: env: {printable(bad)} cannot be passed to a program (an "
                        f"empty name, '=' in the name, or a NUL byte)")
    return prepare(Path(recipe) if recipe is not None else None, overrides, Path(output),
                   caller_env)


@_typed
def sweep(recipe: str | PathLike[str] | None = None, *, command: Command = (),
          output: str | PathLike[str] = "aorta_results", collect: Collect = None,
          trials: int | None = None, timeout: float | None = None, ticket: str | None = None,
          env_passthrough_mode: str | None = None, stop_after_events: int | None = None,
          max_trials: int | None = None, gpus: str | Sequence[str | int] | None = None,
          executor: str | None = None, skip_remote_probe: bool = False,
          baseline: bool | None = None, fresh: bool = False, report: bool = False,
          history: bool | str = False, progress: SkipValidation[TextIO | None] = None,
          verbose: int = 0,
          env: Mapping[str, str] | None = None) -> Run:
    """Run a sweep as `aorta sweep run` does and return the `Run` it wrote, with `.outcome`
    (`SweepOutcome`). Failing trials are data, not exceptions. The arguments are `plan`'s, and
    `fresh` (discard earlier results), `report` (write report.html), `history` (True:
    $AORTA_HISTORY_DB, else <output>/history.sqlite; or a database URL), `progress` (a stream
    for a line per trial; None: silent), `verbose`. Raises `UserError` before any trial for
    anything `plan` refuses, `DiskFullError` when the disk fills up, `Interrupted` (a
    KeyboardInterrupt) when SIGTERM, SIGHUP or another stopping signal left at its default
    action reaches the main thread during the call (the same call resumes both), and
    `FilesystemError` (a `UserError`) for a path it cannot write (read-only, not permitted,
    under a regular file...), with the command's message."""
    prepared = plan(recipe, command=command, output=output, collect=collect, trials=trials,
                    timeout=timeout, ticket=ticket, env_passthrough_mode=env_passthrough_mode,
                    stop_after_events=stop_after_events, max_trials=max_trials, gpus=gpus,
                    executor=executor, skip_remote_probe=skip_remote_probe, baseline=baseline,
                    env=env)
    shown: Progress = Progress() if progress is None else \
        make_progress(progress, prepared.run_dir, verbose)
    outcome = prepared.run(shown, fresh)
    if outcome.status != "interrupted":
        if report:
            from aorta.report import write_report

            outcome = replace(outcome, report=write_report(outcome.run_dir))
        if history:
            url = history if isinstance(history, str) else None
            outcome = replace(outcome, history=record_history(prepared, url))
    run = open_run(outcome.run_dir)
    run.outcome = outcome
    return run


def record_history(prepared: PreparedSweep, url: str | None = None) -> Any:
    """Record the finished run in the performance history at `url` (None: $AORTA_HISTORY_DB,
    else <output>/history.sqlite); what was recorded (`aorta.history.Recorded`). A database
    that refuses it costs no result already written."""
    from aorta.history import record_run
    from aorta.history.db import ENV_VAR

    url = url or prepared.caller_env.get(ENV_VAR) or str(prepared.output / "history.sqlite")
    try:
        with doing("recording in the history database", "--history-db"):
            return record_run(prepared.run_dir, url)
    except UserError as err:
        raise UserError(f"{err} (the run is complete in {prepared.run_dir}; record it later "
                        f"with `aorta history add {prepared.run_dir} --db URL`)") from None
