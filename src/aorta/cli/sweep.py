"""`aorta sweep run|plan`: run a command over a matrix of variants under collectors;
`aorta sweep status`: where every trial of a run stands."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from aorta.base.errors import EXIT_OK, exit_codes_text
from aorta.cli.option_guard import CommandAfterSeparator, option_stack
from aorta.recipe.limits import ENV_MODES
from aorta.run.executors import EXECUTORS


_options = option_stack(
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
                      "add): --history-db, else $AORTA_HISTORY_DB, else <output>/history.sqlite."),
    click.option("--history-db", metavar="URL",
                 help="The history database for --history (implies it): a file path "
                      "(SQLite) or postgresql://USER@HOST/DB."),
    click.option("--ticket", metavar="NAME",
                 help="Name the run directory (<output>/<NAME>/); replaces the recipe's ticket."),
    click.option("--env-passthrough-mode", type=click.Choice(ENV_MODES),
                 help="The child's environment: inherit (aorta's own), clean (a minimal "
                      "one plus the recipe's), or file (inherit, and write it, secrets "
                      "redacted, to the trial's child.env, named by AORTA_ENV_FILE). "
                      "Replaces the recipe's env_passthrough_mode."),
    click.option("--stop-after-events", type=click.IntRange(min=1), metavar="K",
                 help="Stop a cell once K of its trials ended with stop_after's "
                      "event_verdict (default fail); needs a cap (--max-trials or the "
                      "recipe's stop_after.max_trials)."),
    click.option("--max-trials", type=click.IntRange(min=1), metavar="N",
                 help="With stop_after: run at most N trials per cell."),
    click.option("-v", "--verbose", count=True,
                 help="Under each finished trial, print its wrapped argv, the environment "
                      "it changed or removed, and each collector's capture state."),
    click.argument("command", nargs=-1, type=click.UNPROCESSED),
)


@click.group(epilog=exit_codes_text("3"))
def sweep() -> None:
    """Run a command many times over a matrix of variants, under profilers."""


@sweep.command("run", cls=CommandAfterSeparator, epilog=exit_codes_text("3"))
@_options
def run_command(**kwargs: Any) -> int:
    """Run COMMAND (after --) for every cell and trial of the recipe.

    \b
    aorta sweep run --recipe recipe.yaml --output ./results -- python bench.py --size 512

    Results land in <output>/<run>/; rerunning the same command resumes what is missing.
    On Ctrl-C or another stopping signal the running trial is stopped, the run is marked
    interrupted, and the same command resumes it. Every word of COMMAND goes after --; an option value that looks like a flag is refused.
    """
    return _sweep(kwargs)


@sweep.command("plan", cls=CommandAfterSeparator, epilog=exit_codes_text())
@_options
def plan_command(**kwargs: Any) -> int:
    """Same as `sweep run --dry-run`: validate and print the plan."""
    return _sweep(kwargs, dry_run=True)


def _sweep(kwargs: dict[str, Any], dry_run: bool = False) -> int:
    """Hand the flags to the library (`aorta.plan`, then the prepared sweep's `run`), print
    what it says, and return the exit code."""
    from aorta.api.sweep import plan, record_history
    from aorta.run.progress import make_progress
    from aorta.run.summary_text import summary_lines

    command = tuple(kwargs.pop("command"))
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


@sweep.command("status", epilog=exit_codes_text())
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the statuses as JSON.")
def status_command(run_dir: Path, as_json: bool) -> int:
    """Show where every trial of RUN_DIR stands, Slurm jobs included.

    A trial is complete (with its verdict), queued or running on Slurm, lost (its job ended
    without a result), cancelled, not started, or skipped (its cell was stopped early by
    the recipe's stop_after).

    \b
    aorta sweep status aorta_results/matmul-dtype
    """
    from aorta.run.status import run_status

    status = run_status(run_dir)
    click.echo(json.dumps(status.to_json(), indent=2) if as_json else "\n".join(status.lines()))
    return EXIT_OK
