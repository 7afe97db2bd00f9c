"""`aorta report RUN_DIR`: a run's results as one self-contained HTML page, Markdown or JSON."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click

from aorta.base.errors import EXIT_OK, exit_codes_text

Format = Literal["html", "md", "json"]


@dataclass(frozen=True)
class ReportOptions:
    run_dir: Path
    format: Format = "html"
    output: Path | None = None     # html: default <run_dir>/report.html; md/json: stdout
    allow_partial: bool = False    # count figures of `partial` captures as measurements


@click.command(epilog=exit_codes_text())
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["html", "md", "json"]), default="html",
              show_default=True, help="html: one self-contained page; md and json: the same "
                                      "content, printed for terminals and scripts.")
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write here instead (html default: RUN_DIR/report.html; md/json default: "
                   "stdout).")
@click.option("--allow-partial", is_flag=True,
              help="Count the figures of captures that skipped records (state 'partial').")
def report(run_dir: Path, fmt: Format, output: Path | None, allow_partial: bool) -> int:
    """Report a run: header, cells, metrics with spread, trial distributions, top kernels,
    failures with the end of their stderr (or stdout), warnings, and links to every artifact.

    Reads only RUN_DIR's files (run.json, env.json, matrix.json, the trials' result.json);
    a run with failed or missing trials still reports.
    """
    return run(ReportOptions(run_dir, fmt, output, allow_partial))


def run(opts: ReportOptions) -> int:
    from aorta.report import (REPORT_FILE, build_report, render_json, render_markdown, write_html,
                              write_report_file)

    built = build_report(opts.run_dir, opts.allow_partial)
    if opts.format == "html":
        click.echo(str(write_html(built, opts.run_dir, opts.output or opts.run_dir / REPORT_FILE)))
        return EXIT_OK
    text = render_markdown(built) if opts.format == "md" else render_json(built, opts.run_dir)
    if opts.output is None:
        click.echo(text, nl=False)
    else:
        write_report_file(opts.run_dir, opts.output, text)
        click.echo(str(opts.output))
    return EXIT_OK
