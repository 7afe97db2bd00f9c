"""`aorta doctor`: what can be profiled on this machine, what cannot, and the fix for each."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import click

from aorta.cli.option_guard import CommandAfterSeparator, check_separator
from aorta.errors import EXIT_OK, EXIT_USAGE

__all__ = ["doctor", "doctor_rows", "interpreter_checks", "interpreter_row", "doctor_lines",
           "doctor_refusal"]

if TYPE_CHECKING:
    from aorta.collectors.base import CollectorOptions
    from aorta.collectors.child_python import ChildImport

Row = dict[str, object]
#: Without a command, the interpreters a `-- python3 script.py` (or `python`) command would run.
DEFAULT_PYTHONS = ("python3", "python")


def doctor_rows(names: list[str] | None = None, command: Sequence[str] = (),
                env: Mapping[str, str] | None = None,
                options: Mapping[str, CollectorOptions] | None = None) -> list[Row]:
    """One row per collector, one per backend a collector reports in `details["backends"]`,
    and one per interpreter check (`interpreter_checks`, run all at once)."""
    from aorta.collectors.child_python import check_imports
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
        rows.append({"check": name, "usable": cap.usable, "version": cap.version,
                     "reason": cap.reason, "fix": cap.fix})
        backends = cap.details.get("backends") if isinstance(cap.details, Mapping) else None
        if isinstance(backends, Mapping):
            for backend, info in backends.items():
                info = info if isinstance(info, Mapping) else {}
                rows.append({"check": f"{name}:{backend}", "usable": bool(info.get("usable")),
                             "version": info.get("version"), "reason": info.get("reason", ""),
                             "fix": info.get("fix", "")})
        rows += [interpreter_row(name, label, found[python, module])
                 for label, python, module in checks[name]]
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
    if not modules:
        return []
    commands = [tuple(command)] if command else [(p, "script.py") for p in DEFAULT_PYTHONS]
    checks: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for argv in commands:
        python = collector.child_python(argv, env)
        if python is None or python in seen:
            continue
        seen.add(python)
        checks += [("command" if command else argv[0], python, module) for module in modules]
    return checks


def interpreter_row(name: str, label: str, found: ChildImport) -> Row:
    """The row `<collector>@<label>` of one interpreter check."""
    python, module = found.python, found.module
    reason = f"{module} importable by {python}" if found.ok else \
        f"{module} is not importable by {python}: {found.problem}"
    return {"check": f"{name}@{label}", "usable": found.ok is True, "version": None,
            "reason": reason,
            "fix": "" if found.ok else f"install {module.split('.')[0]} into {python}, or run "
                                       f"the command with the Python that has it"}


def doctor_lines(rows: list[dict[str, object]]) -> list[str]:
    """The rows as `aorta doctor` prints them: `ok `/`NO `, the check, version, reason, fix."""
    width = max((len(str(r["check"])) for r in rows), default=0)
    lines = []
    for r in rows:
        state = "ok " if r["usable"] else "NO "
        version = f" {r['version']}" if r["version"] else ""
        lines.append(f"{state} {str(r['check']).ljust(width)}{version}"
                     + (f"  {r['reason']}" if r["reason"] else ""))
        if not r["usable"] and r["fix"]:
            lines.append(f"    {' ' * width}fix: {r['fix']}")
    return lines


def doctor_refusal(rows: list[dict[str, object]], with_command: bool = False
                   ) -> dict[str, object] | None:
    """The first collector row (not a backend's) that cannot measure, or None: what makes
    `doctor --collect` exit 2. Interpreter rows (`torch@python3`) count only when they are
    the given command's own."""
    return next((r for r in rows if ":" not in str(r["check"]) and not r["usable"]
                 and ("@" not in str(r["check"]) or with_command)), None)


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
    rows = doctor_rows(names, command)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        for line in doctor_lines(rows):
            click.echo(line)
    if names and doctor_refusal(rows, bool(command)) is not None:
        return EXIT_USAGE
    return EXIT_OK
