"""`aorta sweep run|plan`: run a command over a matrix of variants under collectors."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from aorta.base.errors import EXIT_OK
from aorta.cli.option_guard import CommandAfterSeparator, check_separator
from aorta.cli.run_settings import run_setting_options
from aorta.run.executors import EXECUTORS


F = TypeVar("F", bound=Callable[..., Any])


_OPTIONS = [
    click.option("--recipe", type=click.Path(path_type=Path, dir_okay=False),
                 help="Recipe YAML: trials, axes, collectors and their options."),
    click.option("--output", type=click.Path(path_type=Path, file_okay=False),
                 default=Path("aorta_results"), show_default=True,
                 help="Where run directories go (<output>/<ticket or recipe name>/)."),
    click.option("--collect", metavar="A,B",
                 help="Replace the recipe's collector list (options of the survivors are "
                      "kept); 'none' runs with no collector (an empty value is refused)."),
    click.option("--trials", type=click.IntRange(min=1), help="Trials per cell."),
    click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
                 help="Seconds per trial before its process group is killed."),
    click.option("--dry-run", is_flag=True,
                 help="Validate everything and print the plan; run and write nothing."),
    click.option("--fresh", is_flag=True,
                 help="Discard the run directory's earlier results instead of resuming."),
    click.option("--strict", is_flag=True,
                 help="Exit 3 when any trial did not pass (without it: only when none did)."),
    click.option("--gpus", metavar="LIST|all",
                 help="Run up to one trial per GPU at once, each pinned to its GPU "
                      "(CUDA_VISIBLE_DEVICES, or ROCR_VISIBLE_DEVICES on AMD): indices, "
                      "GPU-/MIG- ids this host lists (nvidia-smi -L, /sys/class/kfd)."),
    click.option("--executor", type=click.Choice(list(EXECUTORS)),
                 help="Where trials run (default: the recipe's, else local)."),
    click.option("--skip-remote-probe", is_flag=True,
                 help="With --executor slurm: submit the trials without first checking the "
                      "collectors on a node with a probe job (a collector that cannot "
                      "measure there then fails every trial)."),
    click.option("--baseline/--no-baseline", default=None,
                 help="Add interleaved trials with no collector to measure its overhead."),
    click.option("--report", is_flag=True, help="Write report.html into the run directory."),
    click.option("--history", is_flag=True,
                 help="Record the finished run in the performance history (aorta history "
                      "add): --history-db, else $AORTA_HISTORY_DB, else "
                      "<output>/history.sqlite."),
    click.option("--history-db", metavar="URL",
                 help="The history database for --history (implies it): a file path "
                      "(SQLite) or postgresql://USER@HOST/DB."),
    *run_setting_options(),
    click.option("-v", "--verbose", count=True,
                 help="Under each finished trial, print its wrapped argv, the environment "
                      "it changed or removed, and each collector's capture state."),
    click.argument("command", nargs=-1, type=click.UNPROCESSED),
]


def _options(fn: F) -> F:
    for decorator in reversed(_OPTIONS):
        fn = decorator(fn)
    return fn


@click.group()
def sweep() -> None:
    """Run a command many times over a matrix of variants, under profilers."""


@sweep.command("run", cls=CommandAfterSeparator)
@_options
@click.pass_context
def run_command(ctx: click.Context, /, **kwargs: Any) -> int:
    """Run COMMAND (after --) for every cell and trial of the recipe.

    \b
    aorta sweep run --recipe recipe.yaml --output ./results -- python bench.py --size 512

    Results land in <output>/<run>/; rerunning the same command resumes what is missing.
    Exit 0 when done (failing trials are data), 3 when no trial passed (with --strict: when
    any did not), 2 for bad usage or a collector that cannot attach, 130 on Ctrl-C, 128 + n
    on signal n (143 SIGTERM, 129 SIGHUP): the running trial is stopped, the run is marked
    interrupted, and the same command resumes it.
    Every word of COMMAND goes after --; an option value that looks like a flag is refused.
    """
    return _sweep(ctx, kwargs)


@sweep.command("plan", cls=CommandAfterSeparator)
@_options
@click.pass_context
def plan_command(ctx: click.Context, /, **kwargs: Any) -> int:
    """Same as `sweep run --dry-run`: validate and print the plan."""
    return _sweep(ctx, kwargs, dry_run=True)


def _sweep(ctx: click.Context, kwargs: dict[str, Any], dry_run: bool = False) -> int:
    """Hand the flags to the library (`aorta.plan`, then the prepared sweep's `run`), print
    what it says, and return the exit code."""
    from aorta.api.sweep import plan, record_history
    from aorta.run.progress import make_progress
    from aorta.run.summary_text import summary_lines

    command = tuple(kwargs.pop("command"))
    check_separator(ctx.meta.get("aorta_args", []), command, ctx)
    flags = {k: kwargs.pop(k) for k in ("dry_run", "fresh", "strict", "verbose", "report",
                                        "history", "history_db")}
    prepared = plan(command=command, **kwargs)
    if dry_run or flags["dry_run"]:
        click.echo("\n".join(prepared.plan_lines(flags["fresh"])))
        return EXIT_OK
    outcome = prepared.run(make_progress(sys.stderr, prepared.run_dir, flags["verbose"]),
                           flags["fresh"])
    click.echo("\n".join(summary_lines(outcome)))
    if outcome.status != "interrupted" and flags["report"]:
        from aorta.report import write_report

        click.echo(f"report: {write_report(outcome.run_dir)}")
    if outcome.status != "interrupted" and (flags["history"] or flags["history_db"]):
        from aorta.cli.history import recorded_line

        click.echo(f"history: {recorded_line(record_history(prepared, flags['history_db']))}")
    return outcome.exit_code(flags["strict"])


from aorta.cli.sweep_status import status_command  # noqa: E402  (a sibling verb, registered here)
sweep.add_command(status_command)
