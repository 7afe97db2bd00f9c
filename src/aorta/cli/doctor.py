"""`aorta doctor`: what can be profiled on this machine, what cannot, and the fix for each."""

from __future__ import annotations

import json

import click

from aorta.errors import EXIT_OK, EXIT_USAGE

__all__ = ["doctor", "doctor_rows", "doctor_lines", "doctor_refusal"]


def doctor_rows(names: list[str] | None = None) -> list[dict[str, object]]:
    """One row per collector, then one per backend a collector reports in `details`."""
    from aorta.collectors.registry import get
    from aorta.collectors.registry import names as all_names

    rows: list[dict[str, object]] = []
    for name in names or all_names():
        cap = get(name).probe()
        rows.append({"check": name, "usable": cap.usable, "version": cap.version,
                     "reason": cap.reason, "fix": cap.fix})
        backends = cap.details.get("backends") if isinstance(cap.details, dict) else None
        if isinstance(backends, dict):
            for backend, info in backends.items():
                info = info if isinstance(info, dict) else {}
                rows.append({"check": f"{name}:{backend}", "usable": bool(info.get("usable")),
                             "version": info.get("version"), "reason": info.get("reason", ""),
                             "fix": info.get("fix", "")})
    return rows


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


def doctor_refusal(rows: list[dict[str, object]]) -> dict[str, object] | None:
    """The first collector row (not a backend's) that cannot measure, or None: what makes
    `doctor --collect` exit 2."""
    return next((r for r in rows if ":" not in str(r["check"]) and not r["usable"]), None)


@click.command()
@click.option("--collect", metavar="A,B", help="Check only these collectors; exit 2 if any "
              "of them cannot measure here.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def doctor(collect: str | None, as_json: bool) -> int:
    """Check every collector and backend: found, version, usable here or why not, and the fix.

    Exit 0 when everything asked for (with --collect) is usable, 2 when something is not;
    without --collect it only reports and exits 0.
    """
    from aorta.plan import parse_collect_flag

    names = list(parse_collect_flag(collect)) if collect else None
    rows = doctor_rows(names)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        for line in doctor_lines(rows):
            click.echo(line)
    if names and doctor_refusal(rows) is not None:
        return EXIT_USAGE
    return EXIT_OK
