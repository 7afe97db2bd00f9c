"""`aorta history add|show|report`: record runs in a performance history, print a series,
write the trend page, and gate CI on a regression found in the history."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from aorta.base.errors import EXIT_OK, EXIT_REGRESSION, doing, exit_codes_text
from aorta.cli.option_guard import option_stack
from aorta.comparison import FAIL_ON_HELP
from aorta.stats.family import CORRECTIONS

if TYPE_CHECKING:
    from aorta.history.analyse import View
    from aorta.history.model import Recorded
    from aorta.stats.family import Correction

_DB_HELP = ("A file path (SQLite) or postgresql://USER@HOST/DB. Default: $AORTA_HISTORY_DB, "
            "else aorta_results/history.sqlite. Put a password in $PGPASSWORD or ~/.pgpass "
            "rather than in the URL; it is never printed either way.")


@dataclass(frozen=True)
class ViewOptions:
    db: str | None = None
    recipe: str | None = None
    host: str | None = None
    gpu: str | None = None
    cell: str | None = None
    metric: str | None = None
    kernel: str | None = None
    threshold: float = 0.05
    fail_on: tuple[str, ...] = ()
    recent: int = 1
    correction: Correction = "holm"
    format: str = "text"
    output: Path | None = None
    top: int = 5
    runs: int = 200
    all_runs: bool = False


@click.group(epilog=exit_codes_text("4"))
def history() -> None:
    """A performance history: runs recorded over commits, trends, and the steps in them.

    \b
    aorta history add aorta_results/quickstart
    aorta history show --cell naive --metric wall_s
    aorta history report --fail-on slower
    """


@history.command("add", epilog=exit_codes_text())
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--db", help=_DB_HELP)
@click.option("--commit", help="The workload's commit, instead of asking git.")
@click.option("--host", help="Record under this host name (identical CI machines sharing one "
                             "trend line); default: the host in env.json.")
@click.option("--allow-incomplete", is_flag=True,
              help="Record a run that is still running or was interrupted; its points are "
                   "marked and left out of change detection and --fail-on.")
def add(runs: tuple[Path, ...], db: str | None, commit: str | None, host: str | None,
        allow_incomplete: bool) -> int:
    """Record complete run directories in the history (again: replaces that run's record)."""
    from aorta.history import record_run

    for run_dir in runs:
        with doing("recording in the history database", "--db"):
            done = record_run(run_dir, db, commit=commit, host=host,
                              allow_incomplete=allow_incomplete)
        click.echo(recorded_line(done))
    return EXIT_OK


def recorded_line(done: Recorded) -> str:
    """What `history add` (and `sweep run --history`) prints for one recorded run."""
    commit = (f"commit {done.commit[:12]} (from the {done.commit_source})" if done.commit
              else "no commit (not in a git work tree; --commit names one)")
    verb = "replaced" if done.replaced else "recorded"
    mark = "" if done.status == "complete" else f" ({done.status}: marked, not used for changes)"
    return (f"{verb} {done.run_dir}{mark}: {done.context}, {commit}, {done.cells} cell(s), "
            f"{done.samples} sample(s), {done.kernel_rows} kernel row(s) -> {done.db}")


_view_options = option_stack(
    click.option("--db", help=_DB_HELP),
    click.option("--recipe", help="Only this recipe (as `history show` lists it)."),
    click.option("--host", help="Only this host."),
    click.option("--gpu", help="Only this GPU key (e.g. 'NVIDIA H200', 'none')."),
    click.option("--cell", help="Only this cell."),
    click.option("--metric", help="Only this metric (or kernel table, with --kernel)."),
    click.option("--kernel", help="Only kernels whose name contains this text."),
    click.option("--threshold", type=click.FloatRange(0, 1, max_open=True), default=0.05,
                 show_default=True, help="Steps whose interval lies within this fraction "
                 "read SAME and are not shown (compare's rule, docs/history.md)."),
    click.option("--fail-on", "fail_on", multiple=True, metavar="WHAT", help=FAIL_ON_HELP),
    click.option("--recent", type=click.IntRange(min=0), default=1, show_default=True,
                 help="--fail-on looks at changes beginning at the newest N runs of a "
                      "series (0: all)."),
    click.option("--correction", type=click.Choice(CORRECTIONS), default="holm",
                 show_default=True, help="--fail-on: p-values adjusted across the series it "
                 "checks, so a job fails by chance at most 5% of the time (none: 5% per "
                 "series; docs/history.md)."),
    click.option("--top", type=click.IntRange(min=0), default=5, show_default=True,
                 help="Kernels kept per cell, the largest at their newest run among those in at "
                      "least 5 of the runs shown (0: all); only these are shown, plotted and "
                      "gated."),
    click.option("--runs", type=click.IntRange(min=1), default=200, show_default=True,
                 help="Show the newest N runs of each context; steps are searched over whole "
                      "series, but --top chooses kernels among those in these runs."),
    click.option("--all-runs", is_flag=True, help="Show every run (a long history makes a "
                                                  "large page)."),
)


@history.command("show", epilog=exit_codes_text("4"))
@_view_options
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def show(fmt: str, **kwargs: Any) -> int:
    """Print a metric's or a kernel's series run by run, with its changes; without --metric
    or --kernel, list every series and its changes."""
    return run_show(ViewOptions(format=fmt, **kwargs))


@history.command("report", epilog=exit_codes_text("4"))
@_view_options
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Where to write the page (default: history.html beside an SQLite file, "
                   "else in the current folder).")
def report(output: Path | None, **kwargs: Any) -> int:
    """Write one self-contained HTML page of trend plots per cell, metric and top kernel,
    marking every detected change."""
    return run_report(ViewOptions(output=output, **kwargs))


def run_show(opts: ViewOptions) -> int:
    from aorta.history.render_text import json_doc, listing_lines, series_lines

    view = _load(opts)
    if opts.format == "json":
        click.echo(json_doc(view), nl=False)
    elif opts.metric is None and opts.kernel is None:
        click.echo("\n".join(listing_lines(view.items, view.few_kernels)))
    else:
        click.echo("\n\n".join("\n".join(series_lines(item, view.runs, view.settings.runs))
                               for item in view.items))
    return _gate(view)


def run_report(opts: ViewOptions) -> int:
    from aorta.history.render_html import default_page, write_page

    view = _load(opts)
    target = opts.output or default_page(opts.db)
    with doing("writing the history page", "--output"):
        write_page(view, target)
    changes = [c for a in view.items for c in a.changes]
    incomplete = {p.run.id for a in view.items for p in a.series.points if not p.run.complete}
    click.echo(f"{target}: {len(view.items)} series, {len(changes)} change(s) detected, "
               f"{sum(c.regression for c in changes)} regression(s)"
               + (f", {len(incomplete)} incomplete run(s) marked, not used for changes"
                  if incomplete else "")
               + (f"; failing --fail-on {','.join(opts.fail_on)}: {len(view.failing)}"
                  if opts.fail_on else ""))
    return _gate(view)


def _load(opts: ViewOptions) -> View:
    from aorta.history.analyse import Settings, load_view
    from aorta.history.store import Filters

    filters = Filters(opts.recipe, opts.host, opts.gpu, opts.cell, opts.metric, opts.kernel)
    settings = Settings(opts.threshold, recent=opts.recent, top=opts.top,
                        correction=opts.correction,
                        runs=None if opts.all_runs else opts.runs)
    with doing("reading the history database", "--db"):
        return load_view(opts.db, filters, settings, opts.fail_on)


def _gate(view: View) -> int:
    if not view.failing:
        return EXIT_OK
    from aorta.history.render_text import change_text

    for item, change in view.failing[:5]:
        click.echo(f"aorta: regression: {change_text(item.series, change)}", err=True)
    if len(view.failing) > 5:
        click.echo(f"aorta: and {len(view.failing) - 5} more regression(s)", err=True)
    return EXIT_REGRESSION
