"""`aorta export RUN`: a run's trial and kernel tables as CSV or Parquet files."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import click

from aorta.base.errors import EXIT_OK, UserError, doing

Format = Literal["csv", "parquet"]


@dataclass(frozen=True)
class ExportOptions:
    run_dir: Path
    format: Format = "csv"
    output: Path | None = None       # default: <run_dir>/export/
    allow_partial: bool = False


@click.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet"]), default="csv",
              show_default=True, help="parquet needs pyarrow (the `fast` extra).")
@click.option("--output", type=click.Path(path_type=Path, file_okay=False),
              help="Folder for trials.<ext> and kernels.<ext> (default: RUN_DIR/export).")
@click.option("--allow-partial", is_flag=True,
              help="Count the figures of captures that skipped records (state 'partial').")
def export(run_dir: Path, fmt: Format, output: Path | None, allow_partial: bool) -> int:
    """Write RUN_DIR's tables: trials (one row per trial, one column per measured metric and
    capture) and kernels (one row per trial and kernel), the tables run.trials_frame() and
    run.kernels_frame() give in Python (docs/api.md)."""
    return run(ExportOptions(run_dir, fmt, output, allow_partial))


def run(opts: ExportOptions) -> int:
    from aorta.api.run import kernel_columns, trial_columns
    from aorta.api.run import open_run
    from aorta.store.files import write_anywhere
    from aorta.store.run_dir import RunStore

    source = open_run(opts.run_dir)
    tables = {"trials": trial_columns(source.name, source.trials, opts.allow_partial),
              "kernels": kernel_columns(source.name, source.trials, opts.allow_partial)}
    encode = _csv if opts.format == "csv" else _parquet
    for name, columns in tables.items():
        target = f"{name}.{opts.format}"
        data = encode(columns)
        with doing("writing the tables", "--output"):
            if opts.output is None:
                RunStore(opts.run_dir.resolve()).write_file(target, data, parts=("export",))
                click.echo(str(opts.run_dir / "export" / target))
            else:
                click.echo(str(write_anywhere(opts.output / target, data)))
    return EXIT_OK


def _csv(columns: dict[str, list[object]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(zip(*columns.values()))
    return out.getvalue().encode()


def _parquet(columns: dict[str, list[object]]) -> bytes:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UserError("--format parquet needs pyarrow: pip install pyarrow (or "
                        "aorta-profiling[fast]); --format csv needs nothing") from None
    sink = io.BytesIO()
    pq.write_table(pa.table(columns), sink)
    return sink.getvalue()
