"""Renderings of a comparison: text and Markdown (lines), JSON (one string). HTML lives in
`render_html`. Renderers only read the rows; every number was computed before.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from aorta.store.files import finite_json
from aorta.compare.model import CellComparison, Comparison, Row

__all__ = ["text_lines", "markdown_lines", "json_text", "COMPARE_SCHEMA", "fmt_number",
           "fmt_ratio", "fmt_interval", "fmt_p", "verdict_text", "method_line", "summary_line",
           "kernel_groups", "left_out_line", "cell_header", "kernel_head"]

COMPARE_SCHEMA = 1
_METRIC_HEAD = ("metric", "base", "new", "ratio", "interval", "p", "verdict", "note")
_KERNEL_HEAD = ("name", "base ms", "new ms", "change ms", "ratio", "interval", "p", "verdict",
                "note")


def fmt_number(value: float | None, count: bool = False) -> str:
    """Four significant digits (a count as a plain number); '-' for no value."""
    if value is None:
        return "-"
    if not math.isfinite(value) or count:
        return f"{value:g}"
    if value != 0 and (abs(value) >= 1e6 or abs(value) < 1e-3):
        return f"{value:.3e}"
    return f"{value:.0f}" if abs(value) >= 1000 else f"{value:#.4g}"


def fmt_ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def fmt_interval(row: Row) -> str:
    if row.ci_low is None and row.ci_high is None:
        return "-" if row.p_value is None else "[unbounded]"
    low = "0" if row.ci_low is None else f"{row.ci_low:.3f}"
    high = "inf" if row.ci_high is None else f"{row.ci_high:.3f}"
    return f"[{low}, {high}]"


def fmt_p(value: float | None) -> str:
    if value is None:
        return "-"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def verdict_text(row: Row) -> str:
    if row.verdict == "UNCERTAIN" and row.more_trials is not None:
        return f"UNCERTAIN (~{row.more_trials} more/side)"
    return row.verdict


def method_line(comparison: Comparison) -> str:
    s = comparison.settings
    return (f"ratio = new median / base median; {1 - s.alpha:.0%} bootstrap interval "
            f"({s.resamples} resamples, seed {s.seed}); Mann-Whitney p; SAME within "
            f"+/-{s.threshold:.1%}; alpha {s.alpha:g}")


def summary_line(comparison: Comparison) -> str:
    tally = comparison.tally()
    text = ", ".join(f"{n} {v}" for v, n in tally.items()) or "no rows"
    return f"summary: {text}"


def kernel_groups(cell: CellComparison, top: int) -> list[tuple[str, list[Row], list[Row]]]:
    """Per kernel table: (table, rows shown, rows left out), largest absolute change first.
    `top` 0 shows every row."""
    groups = []
    for table in dict.fromkeys(r.table or "" for r in cell.kernel_rows()):
        rows = [r for r in cell.kernel_rows() if r.table == table]
        groups.append((table, rows[:top], rows[top:]) if top > 0 else (table, rows, []))
    return groups


def cell_header(cell: CellComparison) -> str:
    def side(name: str, t: Any) -> str:
        extra = [f"{n} {w}" for n, w in ((t.failed, "failed"), (t.errored, "errored"),
                                         (t.missing, "missing")) if n]
        return f"{name} {t.passed}/{t.total} passed" + (f" ({', '.join(extra)})" if extra else "")

    return f"cell {cell.label}: {side('base', cell.base_trials)}, {side('new', cell.new_trials)}"


def _metric_cells(row: Row) -> tuple[str, ...]:
    count = row.kind == "count"
    return (row.name, fmt_number(row.base_median, count), fmt_number(row.new_median, count),
            fmt_ratio(row.ratio), fmt_interval(row), fmt_p(row.p_value), verdict_text(row),
            row.note)


def kernel_head(table: str) -> tuple[str, ...]:
    """Column names for a kernel table; cProfile's table holds functions, not kernels."""
    return ("function" if table.endswith("_functions") else "kernel",) + _KERNEL_HEAD[1:]


def _kernel_cells(row: Row) -> tuple[str, ...]:
    change = f"{row.change:+.4g}"
    return (row.name, fmt_number(row.base_median), fmt_number(row.new_median), change,
            fmt_ratio(row.ratio), fmt_interval(row), fmt_p(row.p_value), verdict_text(row),
            row.note)


def left_out_line(left_out: Sequence[Row]) -> str:
    tally = Counter(r.verdict for r in left_out)
    return (f"... {len(left_out)} more row(s) ("
            + ", ".join(f"{n} {v}" for v, n in sorted(tally.items())) + "); --top 0 lists all")


def _table(rows: Sequence[Sequence[str]], indent: str = "  ") -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    numeric = {1, 2, 3, 4} if len(rows[0]) == len(_KERNEL_HEAD) else {1, 2, 3}
    lines = []
    for row in rows:
        cells = [v.rjust(w) if i in numeric else v.ljust(w)
                 for i, (v, w) in enumerate(zip(row, widths))]
        lines.append((indent + "  ".join(cells)).rstrip())
    return lines


def text_lines(comparison: Comparison, top: int = 20) -> list[str]:
    """A terminal table per cell: metrics, then kernels by absolute time change."""
    lines = [f"base: {comparison.base}", f"new:  {comparison.new}", method_line(comparison)]
    for note in comparison.notes:
        lines.append(f"note: {note}")
    for cell in comparison.cells:
        lines += ["", cell_header(cell)]
        lines += [f"  note: {n}" for n in cell.notes]
        metrics = cell.metric_rows()
        if metrics:
            lines += _table([_METRIC_HEAD] + [_metric_cells(r) for r in metrics])
        for table, shown, left_out in kernel_groups(cell, top):
            lines += ["", f"  {table}, by absolute change:"]
            lines += _table([kernel_head(table)] + [_kernel_cells(r) for r in shown])
            if left_out:
                lines.append("  " + left_out_line(left_out))
    lines += ["", summary_line(comparison)]
    return lines


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return out


def markdown_lines(comparison: Comparison, top: int = 20) -> list[str]:
    """The same content as `text_lines`, as Markdown tables."""
    lines = ["# aorta compare", "", f"- base: `{comparison.base}`", f"- new: `{comparison.new}`",
             f"- {method_line(comparison)}"]
    lines += [f"- note: {n}" for n in comparison.notes]
    for cell in comparison.cells:
        lines += ["", f"## {cell_header(cell)}", ""]
        lines += [f"- note: {n}" for n in cell.notes]
        if cell.notes:
            lines.append("")
        if cell.metric_rows():
            lines += _md_table(_METRIC_HEAD, [_metric_cells(r) for r in cell.metric_rows()])
        for table, shown, left_out in kernel_groups(cell, top):
            lines += ["", f"### {table}, by absolute change", ""]
            lines += _md_table(kernel_head(table), [_kernel_cells(r) for r in shown])
            if left_out:
                lines += ["", left_out_line(left_out)]
    lines += ["", f"**{summary_line(comparison)}**"]
    return lines


def json_text(comparison: Comparison, regressions: Sequence[Row] = ()) -> str:
    """Everything, every kernel included, as strict JSON (an unbounded interval end is
    null). `regressions` lists the rows that made the command fail, if any."""
    settings = asdict(comparison.settings)
    settings["metrics"] = list(comparison.settings.metrics)
    doc = {
        "schema_version": COMPARE_SCHEMA, "base": comparison.base, "new": comparison.new,
        "settings": settings, "notes": list(comparison.notes),
        "summary": comparison.tally(),
        "regressions": [{"cell": r.cell, "scope": r.scope, "name": r.name, "table": r.table}
                        for r in regressions],
        "cells": [{
            "label": c.label, "base_cell": c.base_cell, "new_cell": c.new_cell,
            "base_trials": asdict(c.base_trials), "new_trials": asdict(c.new_trials),
            "notes": list(c.notes),
            "metrics": [_row_doc(r) for r in c.metric_rows()],
            "kernels": [_row_doc(r) for r in c.kernel_rows()],
        } for c in comparison.cells],
    }
    return json.dumps(finite_json(doc), indent=2, allow_nan=False)


def _row_doc(row: Row) -> dict[str, Any]:
    doc = asdict(row)
    doc["raw_names"] = list(row.raw_names)
    doc["change"] = row.change
    if row.scope == "metric":
        for key in ("table", "base_calls", "new_calls", "raw_names"):
            doc.pop(key)
    return doc

