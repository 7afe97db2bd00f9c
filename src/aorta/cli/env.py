"""`aorta env`: the environment snapshot every run records as env.json."""

from __future__ import annotations

import json
import sys

import click

from aorta.base.errors import EXIT_OK, exit_codes_text


@click.command(epilog=exit_codes_text())
@click.option("--json", "as_json", is_flag=True, help="Print JSON even on a terminal.")
def env(as_json: bool) -> int:
    """Print the host, GPU and software snapshot (JSON, or a table on a terminal)."""
    from aorta.host.snapshot import snapshot

    snap = snapshot()
    if as_json or not sys.stdout.isatty():
        click.echo(json.dumps(snap, indent=2))
        return EXIT_OK
    from rich.console import Console
    from rich.table import Table

    table = Table(show_header=True, header_style="bold")
    table.add_column("key")
    table.add_column("value", overflow="fold")
    for key, value in _flatten(snap):
        table.add_row(key, value)
    Console().print(table)
    return 0


def _flatten(doc: object, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(doc, dict):
        items = [(f"{prefix}.{key}" if prefix else str(key), value) for key, value in doc.items()]
    elif isinstance(doc, list) and doc and all(isinstance(v, dict) for v in doc):
        items = [(f"{prefix}[{i}]", value) for i, value in enumerate(doc)]
    else:
        return [(prefix, "null" if doc is None else str(doc))]
    return [row for key, value in items for row in _flatten(value, key)]
