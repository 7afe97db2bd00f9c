"""`aorta sweep run|plan`: run a command over a matrix of variants under collectors."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from aorta.base.errors import EXIT_OK, UserError
from aorta.cli.option_guard import CommandAfterSeparator, check_separator
from aorta.cli.run_settings import run_setting_options


@dataclass(frozen=True)
class SweepRunOptions:
    command: tuple[str, ...]
    recipe: Path | None = None
    output: Path = Path("aorta_results")
    collect: str | None = None
    trials: int | None = None
    timeout: float | None = None
    dry_run: bool = False
    fresh: bool = False
    strict: bool = False
    verbose: int = 0
    gpus: str | None = None
    executor: str | None = None
    baseline: bool | None = None
    report: bool = False
    history: bool = False
    history_db: str | None = None
    ticket: str | None = None
    env_passthrough_mode: str | None = None
    stop_after_events: int | None = None
    max_trials: int | None = None
    skip_remote_probe: bool = False


F = TypeVar("F", bound=Callable[..., Any])


def _options(fn: F) -> F:
    decorators = [
        click.option("--recipe", type=click.Path(path_type=Path, dir_okay=False),
                     help="Recipe YAML: trials, axes, collectors and their options."),
        click.option("--output", type=click.Path(path_type=Path, file_okay=False),
                     default=Path("aorta_results"), show_default=True,
                     help="Where run directories go (<output>/<ticket or recipe name>/)."),
        click.option("--collect", metavar="A,B",
                     help="Replace the recipe's collector list (options of the survivors are "
                          "kept); 'none' runs with no collector."),
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
                          "(CUDA_VISIBLE_DEVICES, or ROCR_VISIBLE_DEVICES on AMD)."),
        click.option("--executor", type=click.Choice(["local", "slurm"]),
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
    for decorator in reversed(decorators):
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
    any did not), 2 for bad usage or a collector that cannot attach, 130 on Ctrl-C.
    Every word of COMMAND goes after --; an option value that looks like a flag is refused.
    """
    return run(_collect_options(ctx, kwargs))


@sweep.command("plan", cls=CommandAfterSeparator)
@_options
@click.pass_context
def plan_command(ctx: click.Context, /, **kwargs: Any) -> int:
    """Same as `sweep run --dry-run`: validate and print the plan."""
    return run(_collect_options(ctx, kwargs, dry_run=True))


def _collect_options(ctx: click.Context, kwargs: dict[str, Any],
                     dry_run: bool = False) -> SweepRunOptions:
    command: tuple[str, ...] = tuple(kwargs.pop("command"))
    check_separator(ctx.meta.get("aorta_args", []), command, ctx)
    opts = SweepRunOptions(command=command, **kwargs)
    return SweepRunOptions(**{**opts.__dict__, "dry_run": opts.dry_run or dry_run})


def run(opts: SweepRunOptions) -> int:
    """Plan, preflight and run (or print) a sweep. Returns the exit code."""
    from aorta.recipe.schema import LoadedRecipe, Recipe, load_recipe
    from aorta.run.env_file import refuse_unwritable_env
    from aorta.run.executors import make_executor
    from aorta.run.overrides import Overrides, parse_collect_flag
    from aorta.run.plan import build_plan
    from aorta.run.progress import make_progress
    from aorta.run.remote_preflight import driver_launch, executor_config
    from aorta.run.summary_text import plan_lines, summary_lines
    from aorta.run.sweep import plan_redactor, preflight, run_sweep, trial_specs
    from aorta.run.sweep_exit import sweep_exit_code

    if opts.recipe is not None:
        loaded = load_recipe(opts.recipe)
    else:
        loaded = LoadedRecipe(recipe=Recipe.model_validate({"schema_version": 1}), path=None,
                              sha256=None)
    overrides = Overrides(command=opts.command or None, trials=opts.trials,
                          timeout=opts.timeout,
                          collect=parse_collect_flag(opts.collect) if opts.collect is not None
                          else None, gpus=opts.gpus, executor=opts.executor,
                          baseline=opts.baseline, ticket=opts.ticket,
                          env_mode=opts.env_passthrough_mode,
                          stop_after_events=opts.stop_after_events, max_trials=opts.max_trials)
    plan = build_plan(loaded, overrides)
    config = executor_config(plan.recipe.executor, opts.skip_remote_probe)
    caller_env = dict(os.environ)  # a copy: os.environ itself is never changed
    output = opts.output.resolve()
    first = trial_specs(plan, output / plan.run_name)[0]
    # Wrapping first: a command a collector can never take (a native binary under proton's
    # mode: cli) is refused with its own fix before the machine's checks name a missing tool.
    # Slurm trials run elsewhere: a node checks and wraps them (aorta.run.remote_preflight).
    first_launch, on_node = driver_launch(first, caller_env, config.kind == "slurm")
    if config.kind != "slurm":
        preflight(plan)
        from aorta.run.child_preflight import check_child_imports

        check_child_imports(plan, caller_env)   # the interpreter the command will run
    refuse_unwritable_env(first.env_mode, caller_env, first_launch)
    executor = make_executor(config)   # validates --gpus / Slurm settings too
    if opts.dry_run:
        from aorta.run.pending import pending_trials

        for line in plan_lines(plan, output / plan.run_name, first_launch,
                               plan_redactor(plan, caller_env),
                               pending_trials(plan, output / plan.run_name, opts.fresh)):
            click.echo(line)
        if on_node is not None:
            click.echo(on_node)
        return EXIT_OK
    outcome = run_sweep(plan, output, caller_env,
                        make_progress(sys.stderr, output / plan.run_name, opts.verbose),
                        opts.fresh, executor)
    for line in summary_lines(outcome):
        click.echo(line)
    if opts.report:
        from aorta.report import write_report

        click.echo(f"report: {write_report(outcome.run_dir)}")
    if outcome.status != "interrupted" and (opts.history or opts.history_db):
        _record_history(outcome.run_dir, opts.history_db, caller_env, output)
    return sweep_exit_code(outcome, opts.strict)


def _record_history(run_dir: Path, db: str | None, caller_env: dict[str, str],
                    output: Path) -> None:
    """Record the finished run; a database that refuses it costs no result already written."""
    from aorta.cli.history import recorded_line
    from aorta.history import record_run
    from aorta.history.db import ENV_VAR

    url = db or caller_env.get(ENV_VAR) or str(output / "history.sqlite")
    try:
        click.echo(f"history: {recorded_line(record_run(run_dir, url))}")
    except UserError as err:
        raise UserError(f"{err} (the run is complete in {run_dir}; record it later with "
                        f"`aorta history add {run_dir} --db URL`)") from None


from aorta.cli.sweep_status import status_command  # noqa: E402  (a sibling verb, registered here)

sweep.add_command(status_command)
