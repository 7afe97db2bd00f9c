"""`aorta doctor`: what can be profiled on this machine, what cannot, and the fix for each."""

from __future__ import annotations

import json

import click

from aorta.base.errors import EXIT_OK, EXIT_USAGE, exit_codes_text
from aorta.cli.option_guard import CommandAfterSeparator


@click.command(cls=CommandAfterSeparator, epilog=exit_codes_text())
@click.option("--collect", metavar="A,B", help="Check only these collectors; exit 2 if any "
              "of them cannot measure here.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def doctor(collect: str | None, as_json: bool, command: tuple[str, ...]) -> int:
    """Check every collector and backend: found, version, usable here or why not, and the fix.

    \b
    aorta doctor --collect torch -- python3 train.py

    Collectors that run a launcher inside the payload (torch and proton in mode cli) are also
    checked with the payload's own interpreter: the one COMMAND (after --) runs on PATH, else
    `python3` and `python` on PATH (rows named collector@interpreter).

    With --collect, a collector asked for that cannot measure here (with a COMMAND, also in
    its interpreter) exits 2; without --collect doctor only reports.
    """
    from aorta.collectors.doctor import doctor_lines, doctor_refusal, doctor_rows
    from aorta.run.overrides import parse_collect_flag

    names = list(parse_collect_flag(collect)) if collect is not None else None
    rows = doctor_rows(names, command)
    click.echo(json.dumps(rows, indent=2) if as_json else "\n".join(doctor_lines(rows)))
    return EXIT_USAGE if names and doctor_refusal(rows, bool(command)) is not None else EXIT_OK
