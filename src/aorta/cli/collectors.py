"""`aorta collectors`: every registered collector, its options, and whether it works here."""

from __future__ import annotations

import click

__all__ = ["collectors", "collector_rows"]


def collector_rows() -> list[dict[str, object]]:
    from aorta.collectors.options import option_table
    from aorta.collectors.probes import run_probes
    from aorta.collectors.registry import get, names

    rows = []
    for name, cap in run_probes(names(), lambda name: get(name).probe()).items():
        collector = get(name)
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
    from aorta.cli.collectors_text import collectors_text

    click.echo(collectors_text(collector_rows(), as_json), nl=False)
    return 0
