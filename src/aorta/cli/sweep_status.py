"""`aorta sweep status RUN_DIR`: where every trial of a run stands, including its Slurm jobs."""

from __future__ import annotations

import json
from pathlib import Path

import click

from aorta.base.errors import EXIT_OK


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
    from aorta.run.status import run_status

    status = run_status(run_dir)
    click.echo(json.dumps(status.to_json(), indent=2) if as_json else "\n".join(status.lines()))
    return EXIT_OK
