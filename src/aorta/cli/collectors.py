"""`aorta collectors`: every registered collector, its options, and whether it works here."""

from __future__ import annotations

import json

import click

from aorta.base.errors import EXIT_OK, exit_codes_text


@click.command(epilog=exit_codes_text())
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def collectors(as_json: bool) -> int:
    """List collectors, their options (with defaults) and whether each is usable here."""
    from aorta.collectors.doctor import collector_lines, collector_rows

    rows = collector_rows()
    click.echo(json.dumps(rows, indent=2) if as_json else "\n".join(collector_lines(rows)))
    return EXIT_OK
