"""`aorta sweep status RUN_DIR`: where every trial of a run stands, including its Slurm jobs."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from aorta.errors import EXIT_OK

if TYPE_CHECKING:
    from aorta.run.status import RunStatus

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
    from aorta.run.status import run_status

    status = run_status(opts.run_dir)
    if opts.as_json:
        doc = asdict(status)
        doc["run_dir"] = str(status.run_dir)
        doc["counts"] = status.counts()
        click.echo(json.dumps(doc, indent=2))
    else:
        for line in status_lines(status):
            click.echo(line)
    return EXIT_OK


def status_lines(status: RunStatus) -> list[str]:
    """A header, the counts, then one aligned row per trial."""
    from aorta.run.status import STATES

    counts = status.counts()
    verdicts = status.verdicts()
    done = counts.get("complete", 0)
    parts = [f"{done} complete" + (" (" + ", ".join(f"{n} {v}" for v, n in
                                                   sorted(verdicts.items())) + ")"
                                  if verdicts else "")]
    parts += [f"{counts[s]} {s}" for s in STATES[1:] if counts.get(s)]
    when = f"finished {status.finished_at}" if status.finished_at \
        else f"started {status.started_at}"
    based = sum(t.name.startswith("baseline_") for t in status.trials)
    kinds = f" ({len(status.trials) - based} profiled, {based} baseline with no collector)" \
        if based else ""
    lines = [f"run {status.run} ({status.run_dir}): {status.status}, {when}",
             f"{len(status.trials)} trial(s){kinds}: " + ", ".join(parts)]
    if status.note:
        lines.append(f"aorta: {status.note}")
    rows = [("cell", "trial", "state", "verdict", "job", "host", "reason")]
    rows += [(t.cell, t.name, t.state, t.verdict or "-", t.job or "-", t.host or "-",
              t.reason or "") for t in status.trials]
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) + "  " + r[6] for r in rows]
    return [line.rstrip() for line in lines]
