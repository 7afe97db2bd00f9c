"""What `aorta doctor` reports, built from each collector's probe and the interpreter checks.

Shared by the click command (any collector, a command after `--`, `--collect`) and the fast
path (`aorta doctor [--json]`, built-in collectors only), which answers from the light probes
(`aorta.collectors.probes`), the default options' snapshot (`option_tables.CHILD_IMPORTS`)
and `aorta.collectors.import_checks`, loading no collector class, click or pydantic: its
interpreter checks start first and run while everything else happens.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence
    from typing import Any, TypeGuard

    from aorta.collectors.import_checks import ChildImport

__all__ = ["Row", "check_targets", "collector_rows", "interpreter_row", "doctor_lines",
           "doctor_refusal", "light_doctor_text"]

Row = dict[str, object]
Check = tuple[str, str, str]        # (label, python, module)


def check_targets(modules: Sequence[str], child_python: Callable[[str], str | None],
                  command: Sequence[str]) -> list[Check]:
    """(label, python, module) for every module of `modules` and every payload interpreter:
    with a command, the one it runs (label "command"); without, `python3` and `python` on
    PATH (labelled so). `child_python(label)` names the interpreter of a label (None: there
    is none); an interpreter two labels name is checked once."""
    from aorta.collectors.child_python import DEFAULT_PYTHONS

    if not modules:
        return []
    labels = ["command"] if command else list(DEFAULT_PYTHONS)
    checks: list[Check] = []
    seen: set[str] = set()
    for label in labels:
        python = child_python(label)
        if python is None or python in seen:
            continue
        seen.add(python)
        checks += [(label, python, module) for module in modules]
    return checks


def collector_rows(name: str, cap: Mapping[str, Any], checks: Sequence[Check],
                   found: Mapping[tuple[str, str], ChildImport]) -> list[Row]:
    """The collector's row (`cap`: usable, version, reason, fix, details as its probe gives
    them), one per backend it reports in `details["backends"]`, one per interpreter check."""
    rows: list[Row] = [{"check": name, "usable": cap["usable"], "version": cap["version"],
                        "reason": cap["reason"], "fix": cap["fix"]}]
    details = cap.get("details")
    backends = details.get("backends") if _is_mapping(details) else None
    if _is_mapping(backends):
        for backend, info in backends.items():
            info = info if _is_mapping(info) else {}
            rows.append({"check": f"{name}:{backend}", "usable": bool(info.get("usable")),
                         "version": info.get("version"), "reason": info.get("reason", ""),
                         "fix": info.get("fix", "")})
    return rows + [interpreter_row(name, label, found[python, module])
                   for label, python, module in checks]


def _is_mapping(value: object) -> TypeGuard[Mapping[Any, Any]]:
    if isinstance(value, dict):           # what the built-in probes give: no import
        return True
    from collections.abc import Mapping

    return isinstance(value, Mapping)


def interpreter_row(name: str, label: str, found: ChildImport) -> Row:
    """The row `<collector>@<label>` of one interpreter check."""
    python, module = found.python, found.module
    reason = f"{module} importable by {python}" if found.ok else \
        f"{module} is not importable by {python}: {found.problem}"
    return {"check": f"{name}@{label}", "usable": found.ok is True, "version": None,
            "reason": reason,
            "fix": "" if found.ok else f"install {module.split('.')[0]} into {python}, or run "
                                       f"the command with the Python that has it"}


def doctor_lines(rows: list[Row]) -> list[str]:
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


def doctor_refusal(rows: list[Row], with_command: bool = False) -> Row | None:
    """The first collector row (not a backend's) that cannot measure, or None: what makes
    `doctor --collect` exit 2. Interpreter rows (`torch@python3`) count only when they are
    the given command's own."""
    return next((r for r in rows if ":" not in str(r["check"]) and not r["usable"]
                 and ("@" not in str(r["check"]) or with_command)), None)


def light_doctor_text(as_json: bool) -> str | None:
    """`aorta doctor [--json]`'s output with the built-in collectors, their default options
    and aorta's own environment; None where a plug-in collector may add rows (click answers)."""
    import os

    from aorta.cli.collectors_text import only_builtin_collectors
    from aorta.collectors.builtin import BUILTIN
    from aorta.collectors.child_python import default_child_python
    from aorta.collectors.import_checks import (check_imports, import_check_argv,
                                                spawn_import_check)
    from aorta.collectors.option_tables import CHILD_IMPORTS
    from aorta.collectors.probes import PROBES, run_probes
    from aorta.early_tools import EarlyTools

    if not only_builtin_collectors():
        return None
    env = os.environ
    names = sorted(BUILTIN)
    def resolver(name: str) -> Callable[[str], str | None]:
        return lambda python: default_child_python(name, python, env)

    checks = {name: check_targets(CHILD_IMPORTS.get(name, ()), resolver(name), ())
              for name in names}
    wanted = list(dict.fromkeys((python, module) for todo in checks.values()
                                for _, python, module in todo))
    with EarlyTools([import_check_argv(*check) for check in wanted], spawn_import_check):
        caps = run_probes(names, lambda name: PROBES[name]())
        found = check_imports(wanted, env)
    rows = [row for name in names for row in collector_rows(name, caps[name], checks[name], found)]
    if as_json:
        from aorta.strict_json import dumps_indented

        return dumps_indented(rows) + "\n"
    return "".join(line + "\n" for line in doctor_lines(rows))
