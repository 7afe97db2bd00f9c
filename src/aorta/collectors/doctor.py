"""What can be profiled on this machine: the rows behind `aorta collectors` and `aorta doctor`,
built from each collector's probe and, for collectors whose launcher runs inside the payload,
from checks of the payload's own interpreter (`aorta.collectors.child_python`)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from pydantic_core import to_jsonable_python

from aorta.collectors.base import Capability, Collector, CollectorOptions
from aorta.collectors.child_python import DEFAULT_PYTHONS, ChildImport, check_imports
from aorta.collectors.registry import (PLUGIN_FIX, BrokenCollectorError, capability, get,
                                      plugin_fault)
from aorta.collectors.registry import names as all_names

Row = dict[str, Any]
Check = tuple[str, str, str]        # (label, python, module)


def _loaded(name: str) -> Collector[Any] | None:
    """`name`'s collector; None for a registered one that cannot be loaded (its probe row
    says why). An unknown name still raises."""
    try:
        return get(name)
    except BrokenCollectorError:
        return None


def collector_rows() -> list[Row]:
    """`aorta collectors`: every collector, its options and whether it is usable here."""
    rows = []
    for name in all_names():
        collector, cap = _loaded(name), capability(name)
        fields = collector.options_model.model_fields if collector else {}
        rows.append({
            "name": name, "summary": collector.summary if collector else "",
            "usable": cap.usable, "version": cap.version, "reason": cap.reason, "fix": cap.fix,
            "options": [{"key": key, "required": field.is_required(),
                         "default": None if field.is_required() else to_jsonable_python(
                             field.get_default(call_default_factory=True)),
                         "description": field.description or ""}
                        for key, field in fields.items()],
        })
    return rows


def collector_lines(rows: list[Row]) -> list[str]:
    """The rows as `aorta collectors` prints them."""
    lines = []
    for row in rows:
        state = "usable" if row["usable"] else "not usable"
        version = f" {row['version']}" if row["version"] else ""
        lines.append(f"{row['name']}{version}: {state}"
                     + (f" ({row['reason']})" if row["reason"] else ""))
        if row["summary"]:
            lines.append(f"  {row['summary']}")
        if not row["usable"] and row["fix"]:
            lines.append(f"  fix: {row['fix']}")
        for opt in row["options"]:
            desc = f"  {opt['description']}" if opt["description"] else ""
            default = "required" if opt["required"] else json.dumps(opt["default"])
            lines.append(f"    {opt['key']} = {default}{desc}")
    return lines


def doctor_rows(names: list[str] | None = None, command: Sequence[str] = (),
                env: Mapping[str, str] | None = None,
                options: Mapping[str, CollectorOptions] | None = None) -> list[Row]:
    """One row per collector, one per backend a collector reports in `details["backends"]`,
    and one per interpreter check (`interpreter_checks`). The checks run while the probes do."""
    env = os.environ if env is None else env
    wanted = names or all_names()
    checks: dict[str, list[Check]] = {}
    broken: dict[str, Capability] = {}
    for name in wanted:
        try:
            if _loaded(name) is not None:
                with plugin_fault(name, "interpreter lookup"):
                    checks[name] = interpreter_checks(name, command, env, (options or {}).get(name))
        except BrokenCollectorError as exc:
            broken[name] = Capability(name, False, reason=str(exc), fix=PLUGIN_FIX)
    todo = [(python, module) for found in checks.values() for _, python, module in found]
    with ThreadPoolExecutor(max_workers=1) as pool:
        answers = pool.submit(check_imports, todo, env)
        caps = {name: broken.get(name) or capability(name) for name in wanted}
        found = answers.result()
    return [row for name in wanted
            for row in _collector_rows(name, caps[name], checks.get(name, []), found)]


def interpreter_checks(name: str, command: Sequence[str], env: Mapping[str, str],
                       options: CollectorOptions | None = None) -> list[Check]:
    """(label, python, module) for every import `name`'s launcher needs (with `options`, else
    the defaults) from the payload's interpreter. With a command: the interpreter it runs
    (label "command"); without: `python3` and `python` on PATH (labelled so). An interpreter
    two labels name is checked once."""
    collector = get(name)
    modules = collector.child_imports(options if options is not None else collector.validate(None))
    if not modules:
        return []
    checks: list[Check] = []
    seen: set[str] = set()
    for label in ["command"] if command else list(DEFAULT_PYTHONS):
        argv = tuple(command) if command else (label, "script.py")
        python = collector.child_python(argv, env)
        if python is None or python in seen:
            continue
        seen.add(python)
        checks += [(label, python, module) for module in modules]
    return checks


def _collector_rows(name: str, cap: Capability, checks: Sequence[Check],
                    found: Mapping[tuple[str, str], ChildImport]) -> list[Row]:
    rows: list[Row] = [{"check": name, "usable": cap.usable, "version": cap.version,
                        "reason": cap.reason, "fix": cap.fix}]
    backends = cap.details.get("backends") if isinstance(cap.details, Mapping) else None
    if isinstance(backends, Mapping):
        for backend, info in backends.items():
            info = info if isinstance(info, Mapping) else {}
            rows.append({"check": f"{name}:{backend}", "usable": bool(info.get("usable")),
                         "version": info.get("version"), "reason": info.get("reason", ""),
                         "fix": info.get("fix", "")})
    return rows + [_interpreter_row(name, label, found[python, module])
                   for label, python, module in checks]


def _interpreter_row(name: str, label: str, found: ChildImport) -> Row:
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
