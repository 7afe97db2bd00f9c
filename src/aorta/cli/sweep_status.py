"""`aorta sweep status RUN_DIR`: where every trial of a run stands, including its Slurm jobs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import click

from aorta.cli.sweep_status_text import status_lines, status_text
from aorta.errors import EXIT_OK

__all__ = ["SweepStatusOptions", "run", "status_command", "status_lines"]


@dataclass(frozen=True)
class SweepStatusOptions:
    run_dir: Path
    as_json: bool = False


@click.command("status")
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
    return run(SweepStatusOptions(run_dir, as_json))


def run(opts: SweepStatusOptions) -> int:
    click.echo(status_text(opts.run_dir, opts.as_json), nl=False)
    return EXIT_OK
