"""What `aorta collectors` prints: shared by the click command and the fast path
(`aorta.cli.light`), so both print the same bytes. Imports no click and no pydantic.

The fast path builds the rows from the built-in collectors' probes (`aorta.collectors.probes`)
and the snapshot of their option tables (`option_tables`, generated from the options models and
checked against them by tests/cli/test_light_path.py); the click command builds them from the
collector classes themselves, plug-ins included.
"""

from __future__ import annotations

__all__ = ["collectors_text", "light_rows"]

Row = dict[str, object]


def collectors_text(rows: list[Row], as_json: bool) -> str:
    """The whole output, newline-terminated."""
    if as_json:
        from aorta.strict_json import dumps_indented   # json's output, without its import

        return dumps_indented(rows) + "\n"
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
        for opt in row["options"]:  # type: ignore[attr-defined]
            desc = f"  {opt['description']}" if opt["description"] else ""
            lines.append(f"    {opt['key']} = {opt['default']}{desc}")
    return "".join(line + "\n" for line in lines)


def only_builtin_collectors() -> bool:
    """Whether the built-in collectors are every collector there is, each with its module,
    probe and option table: False where a plug-in collector is installed (an
    `aorta.collectors` entry point) or a built-in's module is missing."""
    import os

    from aorta.collectors.builtin import BUILTIN
    from aorta.collectors.option_tables import OPTIONS
    from aorta.collectors.probes import PROBES
    from aorta.dist_versions import declares_entry_points

    here = os.path.join(os.path.dirname(os.path.dirname(__file__)), "collectors")
    modules = {path.partition(":")[0].rpartition(".")[2] for path in BUILTIN.values()}
    return (all(os.path.isfile(os.path.join(here, f"{m}.py")) for m in modules)
            and set(BUILTIN) == set(PROBES) == set(OPTIONS)
            and not declares_entry_points("aorta.collectors"))


def light_rows() -> list[Row] | None:
    """The rows of the built-in collectors, or None where they may not be the whole list
    (`only_builtin_collectors`)."""
    from aorta.collectors.builtin import BUILTIN
    from aorta.collectors.option_tables import OPTIONS, SUMMARIES
    from aorta.collectors.probes import PROBES, run_probes

    if not only_builtin_collectors():
        return None
    rows: list[Row] = []
    for name, cap in run_probes(sorted(BUILTIN), lambda name: PROBES[name]()).items():
        rows.append({
            "name": name, "summary": SUMMARIES[name], "usable": cap["usable"],
            "version": cap["version"], "reason": cap["reason"], "fix": cap["fix"],
            "options": [{"key": k, "default": d, "description": t} for k, d, t in OPTIONS[name]],
        })
    return rows
