"""Text and JSON for `aorta history show`, and the words for a change every rendering shares."""

from __future__ import annotations

import json
from collections.abc import Sequence
from statistics import median
from typing import Any

from aorta.history.analyse import Analysed, View
from aorta.history.model import Change, RunInfo, Series
from aorta.history.store import MIN_KERNEL_RUNS
from aorta.rendering import fmt, fmt_interval, fmt_ratio, json_text, text_table, unit_of


INCOMPLETE_NOTE = ("(interrupted), (running): a run recorded with --allow-incomplete; shown, "
                   "but left out of change detection and --fail-on")


def first_shown(series: Series, runs: dict[int, list[RunInfo]], count: int | None) -> int:
    """The position of the first point of `series` among the newest `count` runs of its
    context (None: all): where what is printed and drawn begins."""
    newest = {r.id for r in runs[series.context.id][-count if count else 0:]}
    return next((i for i, p in enumerate(series.points) if p.run.id in newest),
                len(series.points))


def range_text(runs: Sequence[RunInfo], count: int | None) -> str:
    """`runs 4,801-5,000 of 5,000 (abc123 2026-01-01 to ...)`: the runs shown of a context."""
    shown = runs[-count if count else 0:]
    more = "; --runs N or --all-runs shows more" if len(shown) < len(runs) else ""
    return (f"runs {len(runs) - len(shown) + 1:,}-{len(runs):,} of {len(runs):,} "
            f"({shown[0].label} {shown[0].created_at[:10]} to {shown[-1].label} "
            f"{shown[-1].created_at[:10]}){more}")


def size_text(change: Change) -> str:
    """`x1.520 [1.470, 1.580]`: the step's ratio and its interval."""
    return f"x{fmt_ratio(change.ratio)} {fmt_interval(change.low, change.high)}"


def mark_text(change: Change) -> str:
    """`SLOWER x1.520 at abc123`: a change in a list."""
    return f"{change.verdict} x{fmt_ratio(change.ratio)} at {change.after.label}"


def change_text(series: Series, change: Change) -> str:
    """One line: `SLOWER x1.520 [1.470, 1.580] (95%) first at def456 (run NAME, DATE), after
    abc123; CONTEXT, cell CELL, SERIES`."""
    tag = " REGRESSION" if change.regression else ""
    return (f"{change.verdict}{tag} {size_text(change)} ({change.level:.0%}) "
            f"first at {change.after.label} (run {change.after.name}, {change.after.created_at}),"
            f" after {change.before.label}; {series.context.label}, cell {series.cell}, "
            f"{series.name}" + ("" if change.p_adjusted is None else
                                 f"; p {change.p_value:.3g}, {change.p_adjusted:.3g} adjusted "
                                 f"across the series --fail-on checks"))


def series_lines(item: Analysed, runs: dict[int, list[RunInfo]], count: int | None) -> list[str]:
    s = item.series
    unit = unit_of(s.unit_name)
    starts = {c.position: c for c in item.changes}
    first = first_shown(s, runs, count)
    rows = [("#", "commit", "run", "recorded", "n", f"median{f' ({unit})' if unit else ''}",
             "min", "max", "change")]
    for position, point in enumerate(s.points[first:], start=first):
        change = starts.get(position)
        rows.append((str(position + 1), point.run.label, point.run.name + point.run.mark,
                     point.run.created_at, str(len(point.values)), fmt(median(point.values)),
                     fmt(min(point.values)), fmt(max(point.values)),
                     f"<- {change.verdict} x{fmt_ratio(change.ratio)}" if change else ""))
    lines = [f"{s.name}  cell {s.cell}  {s.context.label}", f"  collectors: {s.context.collect}",
             f"  {range_text(runs[s.context.id], count)}", *text_table(rows, indent="  ")]
    if not all(p.run.complete for p in s.points):
        lines.append(f"  {INCOMPLETE_NOTE}")
    if not item.changes:
        return lines + ["  changes: none detected"]
    return lines + ["  changes:", *(f"    {change_text(s, c)}" for c in item.changes)]


def listing_lines(items: Sequence[Analysed], few: int = 0) -> list[str]:
    """Every series in one table: where, what, how many runs, newest median, changes."""
    rows = [("context", "cell", "series", "runs", "newest median", "changes")]
    rows += [(a.series.context.label, a.series.cell, a.series.name, _runs_text(a.series),
              fmt(median(a.series.points[-1].values)) + a.series.points[-1].run.mark,
              ", ".join(mark_text(c) for c in a.changes) or "-") for a in items]
    lines = text_table(rows)
    if any(not p.run.complete for a in items for p in a.series.points):
        lines.append(INCOMPLETE_NOTE)
    if few:
        lines.append(f"{few} kernel series left out: each ran in fewer than {MIN_KERNEL_RUNS} "
                     f"of the newest --runs (or, where fewer, not in all of them)")
    return lines


def _runs_text(series: Series) -> str:
    incomplete = sum(not p.run.complete for p in series.points)
    return f"{len(series.points)}" + (f" ({incomplete} incomplete)" if incomplete else "")


def json_doc(view: View) -> str:
    def change(c: Change) -> dict[str, Any]:
        return {"position": c.position, "verdict": c.verdict, "regression": c.regression,
                "ratio": c.ratio, "interval": [c.low, c.high], "level": c.level,
                "p": c.p_value, "p_adjusted": c.p_adjusted, "method": "bic", "before": _run(c.before), "after": _run(c.after)}

    first = {id(a): first_shown(a.series, view.runs, view.settings.runs) for a in view.items}
    return json_text({"schema_version": 1, "db": view.db, "runs_shown": view.settings.runs,
                      "series": [{
        "context": {"recipe": a.series.context.recipe, "host": a.series.context.host,
                    "gpu": a.series.context.gpu, "collect": json.loads(a.series.context.collect)},
        "cell": a.series.cell, "metric": a.series.metric, "kernel": a.series.kernel,
        "points_left_out": first[id(a)], "points": [
            {"run": _run(p.run), "values": list(p.values)} for p in a.series.points[first[id(a)]:]],
        "changes": [change(c) for c in a.changes]} for a in view.items],
        "failing": [{"cell": a.series.cell, "series": a.series.name, "position": c.position}
                    for a, c in view.failing]}) + "\n"


def _run(run: RunInfo) -> dict[str, Any]:
    return {"name": run.name, "status": run.status, "complete": run.complete,
            "created_at": run.created_at, "commit": run.commit_sha,
            "commit_dirty": run.commit_dirty, "commit_source": run.commit_source,
            "command": list(run.command)}
