"""`aorta collectors`: every registered collector, its options, and whether it works here."""

from __future__ import annotations

import json

import click

__all__ = ["collectors", "collector_rows"]


def collector_rows() -> list[dict[str, object]]:
    from aorta.collectors.options import option_table
    from aorta.collectors.registry import get, names

    rows = []
    for name in names():
        collector = get(name)
        cap = collector.probe()
        rows.append({
            "name": name, "summary": collector.summary, "usable": cap.usable,
            "version": cap.version, "reason": cap.reason, "fix": cap.fix,
            "options": [{"key": k, "default": d, "description": t}
                        for k, d, t in option_table(collector.options_model)],
        })
    return rows


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def collectors(as_json: bool) -> int:
    """List collectors, their options (with defaults) and whether each is usable here."""
    rows = collector_rows()
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return 0
    for row in rows:
        state = "usable" if row["usable"] else "not usable"
        version = f" {row['version']}" if row["version"] else ""
        click.echo(f"{row['name']}{version}: {state}"
                   + (f" ({row['reason']})" if row["reason"] else ""))
        if row["summary"]:
            click.echo(f"  {row['summary']}")
        if not row["usable"] and row["fix"]:
            click.echo(f"  fix: {row['fix']}")
        for opt in row["options"]:  # type: ignore[attr-defined]
            desc = f"  {opt['description']}" if opt["description"] else ""
            click.echo(f"    {opt['key']} = {opt['default']}{desc}")
    return 0
