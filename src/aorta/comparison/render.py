"""Renderings of a comparison: text and Markdown (lines), JSON (one string). HTML lives in
`render_html`, shared wording in `wording`. Renderers only read the rows; every number was
computed before.

Long kernel names are shortened for the tables (`display`): in text to fit the terminal
`width` when one is given, in Markdown to 64 characters. JSON keeps every name whole.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from aorta.comparison.display import short_names
from aorta.comparison.gate import Gate
from aorta.comparison.model import Comparison, Row
from aorta.comparison.wording import (METRIC_HEAD, cell_header, family_line, gate_line,
                                   kernel_cells, kernel_groups, kernel_head, left_out_line,
                                   method_line, metric_cells, p_head, summary_line)
from aorta.store.files import finite_json

__all__ = ["text_lines", "markdown_lines", "json_text", "COMPARE_SCHEMA", "MARKDOWN_NAME_WIDTH"]

COMPARE_SCHEMA = 2
MARKDOWN_NAME_WIDTH = 64
_MIN_NAME = 24           # the name column never shrinks below this, however narrow the terminal
_INDENT = "  "


def text_lines(comparison: Comparison, top: int = 20, gate: Gate | None = None,
               width: int | None = None) -> list[str]:
    """A terminal table per cell: metrics, then kernels by absolute time change. With a
    `width`, names are shortened so that every column but the note fits in it."""
    lines = [f"base: {comparison.base}", f"new:  {comparison.new}", method_line(comparison),
             family_line(comparison, gate)]
    lines += [f"note: {note}" for note in comparison.notes]
    lines += [f"warning: {w}" for w in (gate.warnings if gate else ())]
    p = p_head(comparison)
    for cell in comparison.cells:
        lines += ["", cell_header(cell)]
        lines += [f"  note: {n}" for n in cell.notes]
        metrics = cell.metric_rows()
        if metrics:
            lines += _table(_head(METRIC_HEAD, p), [metric_cells(r) for r in metrics], width)
        for table, shown, left_out in kernel_groups(cell, top):
            lines += ["", f"  {table}, by absolute change:"]
            lines += _table(kernel_head(table, p), [kernel_cells(r) for r in shown], width)
            if left_out:
                lines.append("  " + left_out_line(left_out))
    lines += ["", summary_line(comparison)]
    if gate is not None and gate.fail_on:
        lines.append(gate_line(gate))
    return lines


def _head(head: tuple[str, ...], p: str) -> tuple[str, ...]:
    return tuple(p if h == "p" else h for h in head)


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], width: int | None) -> list[str]:
    if width is not None:
        rows = _shortened(rows, _name_width(head, rows, width))
    table = [head, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    numeric = {1, 2, 3, 4} if len(head) == 9 else {1, 2, 3}
    lines = []
    for row in table:
        cells = [v.rjust(w) if i in numeric else v.ljust(w)
                 for i, (v, w) in enumerate(zip(row, widths))]
        lines.append((_INDENT + "  ".join(cells)).rstrip())
    return lines


def _name_width(head: Sequence[str], rows: Sequence[Sequence[str]], width: int) -> int:
    """Room for the name column: the terminal less every column but the first and the note
    (the last, free to run on), and the two-space gaps."""
    table = [head, *rows]
    middle = sum(max(len(r[i]) for r in table) for i in range(1, len(head) - 1))
    return max(_MIN_NAME, width - len(_INDENT) - middle - 2 * (len(head) - 1))


def _shortened(rows: Sequence[Sequence[str]], width: int) -> list[tuple[str, ...]]:
    short = short_names([r[0] for r in rows], width)
    return [(short[r[0]], *r[1:]) for r in rows]


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    rows = _shortened(rows, MARKDOWN_NAME_WIDTH)
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    out += ["| " + " | ".join(_md_escape(c) for c in row) + " |" for row in rows]
    return out


def markdown_lines(comparison: Comparison, top: int = 20, gate: Gate | None = None) -> list[str]:
    """The same content as `text_lines`, as Markdown tables."""
    lines = ["# aorta compare", "", f"- base: `{comparison.base}`", f"- new: `{comparison.new}`",
             f"- {method_line(comparison)}", f"- {family_line(comparison, gate)}"]
    lines += [f"- note: {n}" for n in comparison.notes]
    lines += [f"- **warning**: {w}" for w in (gate.warnings if gate else ())]
    p = p_head(comparison)
    for cell in comparison.cells:
        lines += ["", f"## {cell_header(cell)}", ""]
        lines += [f"- note: {n}" for n in cell.notes]
        if cell.notes:
            lines.append("")
        if cell.metric_rows():
            lines += _md_table(_head(METRIC_HEAD, p), [metric_cells(r) for r in cell.metric_rows()])
        for table, shown, left_out in kernel_groups(cell, top):
            lines += ["", f"### {table}, by absolute change", ""]
            lines += _md_table(kernel_head(table, p), [kernel_cells(r) for r in shown])
            if left_out:
                lines += ["", left_out_line(left_out)]
    lines += ["", f"**{summary_line(comparison)}**"]
    if gate is not None and gate.fail_on:
        lines.append(f"**{gate_line(gate)}**")
    return lines


def json_text(comparison: Comparison, gate: Gate | None = None) -> str:
    """Everything, every kernel included, as strict JSON (an unbounded interval end, or an
    open-ended trial advice, is null). `gate` adds what --fail-on watched and failed on."""
    settings = asdict(comparison.settings)
    settings["metrics"] = list(comparison.settings.metrics)
    doc = {
        "schema_version": COMPARE_SCHEMA, "base": comparison.base, "new": comparison.new,
        "settings": settings, "notes": list(comparison.notes),
        "family": {"tested": comparison.tested, "correction": comparison.settings.correction,
                   "guarantee": family_line(comparison, gate)},
        "gate": {"fail_on": list(gate.fail_on) if gate else [],
                 "gated": gate.gated if gate else 0,
                 "warnings": list(gate.warnings) if gate else []},
        "summary": comparison.tally(),
        "regressions": [{"cell": r.cell, "scope": r.scope, "name": r.name, "table": r.table}
                        for r in (gate.failing if gate else ())],
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
