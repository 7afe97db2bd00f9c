"""`aorta export RUN`: a run's trial and kernel tables as CSV or Parquet files."""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

import click

from aorta.base.errors import EXIT_OK, UserError, doing, exit_codes_text

Format = Literal["csv", "parquet"]


@click.command(epilog=exit_codes_text())
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
    from aorta.api.run import kernel_columns, open_run, trial_columns
    from aorta.store.files import write_anywhere
    from aorta.store.run_dir import RunStore

    source = open_run(run_dir)
    tables = {"trials": trial_columns(source.name, source.trials, allow_partial),
              "kernels": kernel_columns(source.name, source.trials, allow_partial)}
    encode = _csv if fmt == "csv" else _parquet
    for name, columns in tables.items():
        target = f"{name}.{fmt}"
        data = encode(columns)
        with doing("writing the tables", "--output"):
            if output is None:
                RunStore(run_dir.resolve()).write_file(target, data, parts=("export",))
                click.echo(str(run_dir / "export" / target))
            else:
                click.echo(str(write_anywhere(output / target, data)))
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
