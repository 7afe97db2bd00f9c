"""`aorta doctor`: what can be profiled on this machine, what cannot, and the fix for each."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import click

from aorta.cli.doctor_text import (Row, check_targets, collector_rows, doctor_lines,
                                   doctor_refusal)
from aorta.cli.option_guard import CommandAfterSeparator, check_separator
from aorta.errors import EXIT_OK, EXIT_USAGE

__all__ = ["doctor", "doctor_rows", "interpreter_checks", "doctor_lines", "doctor_refusal"]

if TYPE_CHECKING:
    from aorta.collectors.base import CollectorOptions
    from aorta.early_tools import EarlyTools


def doctor_rows(names: list[str] | None = None, command: Sequence[str] = (),
                env: Mapping[str, str] | None = None,
                options: Mapping[str, CollectorOptions] | None = None) -> list[Row]:
    """One row per collector, one per backend a collector reports in `details["backends"]`,
    and one per interpreter check (`interpreter_checks`, run all at once)."""
    from aorta.collectors.import_checks import check_imports
    from aorta.collectors.registry import get
    from aorta.collectors.registry import names as all_names

    env = os.environ if env is None else env
    wanted = names or all_names()
    checks = {name: interpreter_checks(name, command, env, (options or {}).get(name))
              for name in wanted}
    found = check_imports([(python, module) for todo in checks.values()
                           for _, python, module in todo], env)
    rows: list[Row] = []
    for name in wanted:
        cap = get(name).probe()
        rows += collector_rows(name, {"usable": cap.usable, "version": cap.version,
                                      "reason": cap.reason, "fix": cap.fix,
                                      "details": cap.details}, checks[name], found)
    return rows


def interpreter_checks(name: str, command: Sequence[str], env: Mapping[str, str],
                       options: CollectorOptions | None = None) -> list[tuple[str, str, str]]:
    """(label, python, module) for every import `name`'s launcher needs (with `options`, else
    the defaults) from the payload's interpreter. With a command: the interpreter it runs
    (label "command"); without: `python3` and `python` on PATH (labelled so)."""
    from aorta.collectors.registry import get

    collector = get(name)
    modules = collector.child_imports(options if options is not None
                                      else collector.validate(None))
    return check_targets(modules, lambda label: collector.child_python(
        tuple(command) if command else (label, "script.py"), env), command)


@click.command(cls=CommandAfterSeparator)
@click.option("--collect", metavar="A,B", help="Check only these collectors; exit 2 if any "
              "of them cannot measure here.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def doctor(ctx: click.Context, collect: str | None, as_json: bool,
           command: tuple[str, ...]) -> int:
    """Check every collector and backend: found, version, usable here or why not, and the fix.

    \b
    aorta doctor --collect torch -- python3 train.py

    Collectors that run a launcher inside the payload (torch and proton in mode cli) are also
    checked with the payload's own interpreter: the one COMMAND (after --) runs on PATH, else
    `python3` and `python` on PATH (rows named collector@interpreter).

    Exit 0 when everything asked for (with --collect) is usable, 2 when something is not
    (with a COMMAND, its interpreter checks count too); without --collect it only reports and
    exits 0.
    """
    names = None
    if collect:
        from aorta.plan import parse_collect_flag  # the recipe's models: only with --collect

        names = list(parse_collect_flag(collect))
    check_separator(ctx.meta.get("aorta_args", []), command, ctx)
    with _early_checks(names, command):
        rows = doctor_rows(names, command)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        for line in doctor_lines(rows):
            click.echo(line)
    if names and doctor_refusal(rows, bool(command)) is not None:
        return EXIT_USAGE
    return EXIT_OK


def _early_checks(names: list[str] | None, command: Sequence[str]) -> EarlyTools:
    """The interpreter checks `doctor_rows` is about to run, as the default options give
    them, started before the collector classes load (which takes as long as the checks
    themselves). A wrong guess costs only a process, killed when the block ends: the rows
    come from what `doctor_rows` asks."""
    from aorta.collectors.child_python import builtin_child_python
    from aorta.collectors.import_checks import import_check_argv, spawn_import_check
    from aorta.collectors.option_tables import CHILD_IMPORTS
    from aorta.early_tools import EarlyTools

    def resolver(name: str) -> Callable[[str], str | None]:
        return lambda label: builtin_child_python(
            name, tuple(command) if command else (label, "script.py"), os.environ)

    wanted = [check for name, modules in CHILD_IMPORTS.items() if names is None or name in names
              for check in check_targets(modules, resolver(name), command)]
    return EarlyTools([import_check_argv(python, module)
                       for python, module in dict.fromkeys((p, m) for _, p, m in wanted)],
                      spawn_import_check)
