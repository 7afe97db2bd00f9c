"""Text and JSON for `aorta history show`: a series run by run, its changes, or the list of
series. Functions return lines; the CLI prints them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from statistics import median
from typing import Any

from aorta.history.model import Change, Series
from aorta.history.analyse import Analysed
from aorta.report.numbers import fmt, unit_of

__all__ = ["series_lines", "listing_lines", "change_text", "json_doc"]


def change_text(series: Series, change: Change) -> str:
    """One line: `SLOWER x1.52 [1.47, 1.58] between abc123 and def456 (run NAME, DATE)`."""
    tag = " REGRESSION" if change.regression else ""
    return (f"{change.verdict}{tag} x{change.ratio:.3f} "
            f"[{change.low:.3f}, {change.high:.3f}] ({change.level:.0%}) "
            f"first at {change.after.label} (run {change.after.name}, {change.after.created_at}),"
            f" after {change.before.label}; {series.context.label}, cell {series.cell}, "
            f"{series.name}")


def series_lines(item: Analysed) -> list[str]:
    s = item.series
    unit = unit_of(s.unit_name)
    lines = [f"{s.name}  cell {s.cell}  {s.context.label}",
             f"  collectors: {s.context.collect}"]
    starts = {c.position: c for c in item.changes}
    rows = [("#", "commit", "run", "recorded", "n", f"median{f' ({unit})' if unit else ''}",
             "min", "max", "change")]
    for position, point in enumerate(s.points):
        change = starts.get(position)
        rows.append((str(position + 1), point.run.label, point.run.name, point.run.created_at,
                     str(len(point.values)), fmt(median(point.values)), fmt(min(point.values)),
                     fmt(max(point.values)),
                     f"<- {change.verdict} x{change.ratio:.3f}" if change else ""))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        lines.append("  " + "  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    if item.changes:
        lines.append("  changes:")
        lines += [f"    {change_text(s, c)}" for c in item.changes]
    else:
        lines.append("  changes: none detected")
    return lines


def listing_lines(items: Sequence[Analysed]) -> list[str]:
    """Every series in one table: where, what, how many runs, newest median, changes."""
    rows = [("context", "cell", "series", "runs", "newest median", "changes")]
    for item in items:
        s = item.series
        marks = ", ".join(f"{c.verdict} x{c.ratio:.2f} at {c.after.label}" for c in item.changes)
        rows.append((s.context.label, s.cell, s.name, str(len(s.points)),
                     fmt(item.latest_median), marks or "-"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in rows]


def json_doc(items: Sequence[Analysed], db: str, failing: Sequence[tuple[Analysed, Change]]
             ) -> str:
    def change(c: Change) -> dict[str, Any]:
        return {"position": c.position, "verdict": c.verdict, "regression": c.regression,
                "ratio": c.ratio, "interval": [c.low, c.high], "level": c.level,
                "method": c.method, "before": _run(c.before), "after": _run(c.after)}

    doc = {"schema_version": 1, "db": db, "series": [{
        "context": {"recipe": a.series.context.recipe, "host": a.series.context.host,
                    "gpu": a.series.context.gpu, "collect": json.loads(a.series.context.collect)},
        "cell": a.series.cell, "metric": a.series.metric, "kernel": a.series.kernel,
        "points": [{"run": _run(p.run), "values": list(p.values)} for p in a.series.points],
        "changes": [change(c) for c in a.changes]} for a in items],
        "failing": [{"cell": a.series.cell, "series": a.series.name, "position": c.position}
                    for a, c in failing]}
    return json.dumps(doc, indent=2, allow_nan=False) + "\n"


def _run(run: Any) -> dict[str, Any]:
    return {"name": run.name, "created_at": run.created_at, "commit": run.commit_sha,
            "commit_dirty": run.commit_dirty, "commit_source": run.commit_source,
            "command": list(run.command)}
