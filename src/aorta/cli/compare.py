"""`aorta compare BASE NEW`: a statistical verdict per metric and per kernel, and a CI gate."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import click

from aorta.base.errors import EXIT_OK, EXIT_REGRESSION, exit_codes_text
from aorta.comparison import FAIL_ON_HELP
from aorta.stats.family import CORRECTIONS

if TYPE_CHECKING:
    from aorta.comparison.gate import Gate
    from aorta.comparison.load import LoadedRun
    from aorta.comparison.model import Comparison
    from aorta.stats.family import Correction

FORMATS = ("text", "json", "md", "html")


@dataclass(frozen=True)
class CompareOptions:
    base: str
    new: str
    threshold: float = 0.05
    alpha: float = 0.05
    metrics: tuple[str, ...] = ()
    fail_on: tuple[str, ...] = ()
    format: str = "text"
    match_templates: bool = False
    kernels: bool = True
    top: int = 20
    correction: str = "none"
    width: int | None = None        # text: terminal columns to fit names in (None: whole)
    allow_partial: bool = False     # count figures of `partial` captures as measurements


@click.command(epilog=exit_codes_text("4"))
@click.argument("base")
@click.argument("new")
@click.option("--threshold", type=click.FloatRange(0, 1, max_open=True), default=0.05,
              show_default=True,
              help="Practical threshold as a fraction: a change within +/- this reads SAME.")
@click.option("--alpha", type=click.FloatRange(0, 0.5, min_open=True), default=0.05,
              show_default=True, help="Significance level per row; intervals are at 1 - alpha.")
@click.option("--metric", "metrics", multiple=True, metavar="NAME",
              help="Compare only this metric (repeat, or separate with commas).")
@click.option("--fail-on", "fail_on", multiple=True, metavar="WHAT",
              help=FAIL_ON_HELP + " Without it compare only reports and exits 0.")
@click.option("--correction", type=click.Choice(CORRECTIONS), default="none", show_default=True,
              help="Adjust p-values across rows: holm bounds the chance of any false alarm, "
                   "bh (over rows not SAME) the share of chance calls. Costs power.")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True)
@click.option("--match-templates", is_flag=True,
              help="Also ignore C++ template arguments when matching kernel names.")
@click.option("--no-kernels", is_flag=True, help="Compare metrics only.")
@click.option("--top", type=click.IntRange(min=0), default=20, show_default=True,
              help="Kernels shown per table in text/md/html (0: all; json has all).")
@click.option("--allow-partial", is_flag=True,
              help="Count the figures of captures that skipped records (state 'partial').")
def compare(metrics: tuple[str, ...], no_kernels: bool, fmt: str, **kwargs: Any) -> int:
    """Compare run directory NEW against BASE (either may be RUN_DIR:CELL).

    \b
    aorta compare results/before results/after --fail-on slower
    aorta compare results/sweep:naive results/sweep:blocked --format md

    For every cell both runs have, each metric and each kernel gets the ratio of medians with
    an exact interval and a verdict: FASTER / SLOWER (significant, and the whole interval
    beyond the threshold), SAME (interval within the threshold), UNCERTAIN (with a range of
    how many more trials would settle it), INCOMPARABLE (no ratio describes the data: a
    negative value, a zero median, or one too close to zero; the note says which). Only
    passing trials count. The false-alarm guarantee is per row; --correction extends it to
    the whole comparison. A collector's figures count only when its capture is ok (with
    --allow-partial, also when it is partial). Without --fail-on compare exits 0 whatever it
    finds: a CI gate needs --fail-on slower.
    """
    from aorta.comparison.gate import split_names

    split = split_names(metrics, "--metric", "a metric name")
    # Names are shortened for a terminal only: piped, every name is whole.
    width = shutil.get_terminal_size((120, 24)).columns if sys.stdout.isatty() else None
    return run(CompareOptions(metrics=split, kernels=not no_kernels, format=fmt, width=width,
                              **kwargs))


def run(opts: CompareOptions) -> int:
    """Load, compare, print. Returns EXIT_REGRESSION when a --fail-on row regressed."""
    from aorta.comparison.build import compare_runs
    from aorta.comparison.gate import evaluate, parse_fail_on
    from aorta.comparison.load import load_run, parse_ref
    from aorta.comparison.model import CompareSettings

    fail_on = parse_fail_on(opts.fail_on)
    settings = CompareSettings(threshold=opts.threshold, alpha=opts.alpha, metrics=opts.metrics,
                               kernels=opts.kernels, match_templates=opts.match_templates,
                               correction=cast("Correction", opts.correction))
    base, new = (load_run(parse_ref(ref), opts.allow_partial) for ref in (opts.base, opts.new))
    for note in _load_notes(base, new, opts.allow_partial):
        click.echo(f"aorta: warning: {note}", err=True)
    comparison = compare_runs(base, new, settings)
    gate = evaluate(comparison, fail_on)
    click.echo(_render(comparison, gate, opts), nl=False)
    for warning in gate.warnings:
        click.echo(f"aorta: warning: {warning}", err=True)
    if gate.failing:
        names = ", ".join(f"{r.cell}/{r.name}" for r in gate.failing[:5])
        more = f" and {len(gate.failing) - 5} more" if len(gate.failing) > 5 else ""
        click.echo(f"aorta: regression: {names}{more}", err=True)
        return EXIT_REGRESSION
    return EXIT_OK


def _render(comparison: Comparison, gate: Gate, opts: CompareOptions) -> str:
    from aorta.comparison.render import json_text, markdown_lines, text_lines

    if opts.format == "html":
        from aorta.comparison.render_html import html_text

        return html_text(comparison, opts.top, gate)
    if opts.format == "json":
        return json_text(comparison, gate) + "\n"
    lines = markdown_lines(comparison, opts.top, gate) if opts.format == "md" \
        else text_lines(comparison, opts.top, gate, opts.width)
    return "\n".join(lines) + "\n"


def _load_notes(base: LoadedRun, new: LoadedRun, allow_partial: bool) -> list[str]:
    """Partial captures, then throttling or differing SM clocks between the two runs
    (telemetry collector)."""
    from statistics import median

    from aorta.run.gpu_notes import gpu_state_notes

    notes = []
    partial = base.partial + new.partial
    if partial:
        said = ("are counted (--allow-partial)" if allow_partial else
                "are left out; --allow-partial counts them")
        notes.append(f"{partial} passing trial(s) have a partial capture (records were skipped "
                     f"while reading); their collector figures {said}")
    medians = {f"{side}:{name}": {k: median(v) for k, v in cell.metrics.items()
                                  if k.startswith("telemetry_") and v}
               for side, run in (("base", base), ("new", new)) for name, cell in run.cells.items()}
    return notes + gpu_state_notes(medians, "the runs")
