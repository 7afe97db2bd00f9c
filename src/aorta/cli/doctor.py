"""`aorta doctor`: what can be profiled on this machine, what cannot, and the fix for each."""

from __future__ import annotations

import json

import click

from aorta.errors import EXIT_OK, EXIT_USAGE

__all__ = ["doctor", "doctor_rows"]


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


@click.command()
@click.option("--collect", metavar="A,B", help="Check only these collectors; exit 2 if any "
              "of them cannot measure here.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def doctor(collect: str | None, as_json: bool) -> int:
    """Check every collector and backend: found, version, usable here or why not, and the fix.

    Exit 0 when everything asked for (with --collect) is usable, 2 when something is not;
    without --collect it only reports and exits 0.
    """
    names = None
    if collect:
        from aorta.plan import parse_collect_flag  # the recipe's models: only with --collect

        names = list(parse_collect_flag(collect))
    rows = doctor_rows(names)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        width = max(len(str(r["check"])) for r in rows)
        for r in rows:
            state = "ok " if r["usable"] else "NO "
            version = f" {r['version']}" if r["version"] else ""
            click.echo(f"{state} {str(r['check']).ljust(width)}{version}"
                       + (f"  {r['reason']}" if r["reason"] else ""))
            if not r["usable"] and r["fix"]:
                click.echo(f"    {' ' * width}fix: {r['fix']}")
    if names and not all(r["usable"] for r in rows if ":" not in str(r["check"])):
        return EXIT_USAGE
    return EXIT_OK
