"""Renderings of a comparison: text and Markdown (lines), JSON (one string). Names are whole but
in the text table given a terminal `width`, where they are shortened (`short_names`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from aorta.comparison.gate import Gate
from aorta.comparison.model import Comparison, Row
from aorta.comparison.wording import (cell_header, family_line, gate_line, kernel_cells,
                                      kernel_groups, kernel_head, left_out_line, method_line,
                                      metric_cells, metric_head, p_head, summary_line)
from aorta.rendering import json_text as json_doc
from aorta.rendering import md_code, md_table, md_text, short_names, text_table

COMPARE_SCHEMA = 2
_MIN_NAME = 24           # the name column never shrinks below this, however narrow the terminal
_INDENT = "  "


def text_lines(comparison: Comparison, top: int = 20, gate: Gate | None = None,
               width: int | None = None) -> list[str]:
    """A table per cell, metrics then kernels by absolute change; names shortened to `width`."""
    lines = [f"base: {comparison.base}", f"new:  {comparison.new}", method_line(comparison),
             family_line(comparison, gate)]
    lines += [f"note: {note}" for note in comparison.notes]
    lines += [f"warning: {w}" for w in (gate.warnings if gate else ())]
    p = p_head(comparison)
    for cell in comparison.cells:
        lines += ["", cell_header(cell)]
        lines += [f"  note: {n}" for n in cell.notes]
        if cell.metric_rows():
            lines += _table(metric_head(p), [metric_cells(r) for r in cell.metric_rows()], width)
        for table, shown, left_out in kernel_groups(cell, top):
            lines += ["", f"  {table}, by absolute change:"]
            lines += _table(kernel_head(table, p), [kernel_cells(r) for r in shown], width)
            if left_out:
                lines.append("  " + left_out_line(left_out))
    lines += ["", summary_line(comparison)]
    if gate is not None and gate.fail_on:
        lines.append(gate_line(gate))
    return lines


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], width: int | None) -> list[str]:
    if width is not None:
        # Room for names: the width less the middle columns and gaps (the note may run on).
        middle = sum(max(len(r[i]) for r in (head, *rows)) for i in range(1, len(head) - 1))
        short = short_names([r[0] for r in rows],
                            max(_MIN_NAME, width - len(_INDENT) - middle - 2 * (len(head) - 1)))
        rows = [(short[r[0]], *r[1:]) for r in rows]
    numeric = {1, 2, 3, 4} if len(head) == 9 else {1, 2, 3}
    return text_table([head, *rows], numeric, _INDENT)


def _md_table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Names (whole) and notes are run-derived and escaped; the figures are ours."""
    return md_table(head, [(md_text(r[0]), *r[1:-1], md_text(r[-1])) for r in rows])


def markdown_lines(comparison: Comparison, top: int = 20, gate: Gate | None = None) -> list[str]:
    """The same content as `text_lines`, as Markdown tables."""
    lines = ["# aorta compare", "", f"- base: {md_code(comparison.base)}",
             f"- new: {md_code(comparison.new)}", f"- {method_line(comparison)}",
             f"- {family_line(comparison, gate)}"]
    lines += [f"- note: {md_text(n)}" for n in comparison.notes]
    lines += [f"- **warning**: {md_text(w)}" for w in (gate.warnings if gate else ())]
    p = p_head(comparison)
    for cell in comparison.cells:
        lines += ["", f"## {md_text(cell_header(cell))}", ""]
        lines += [f"- note: {md_text(n)}" for n in cell.notes] + ([""] if cell.notes else [])
        if cell.metric_rows():
            lines += _md_table(metric_head(p), [metric_cells(r) for r in cell.metric_rows()])
        for table, shown, left_out in kernel_groups(cell, top):
            lines += ["", f"### {md_text(table)}, by absolute change", ""]
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
    gate = gate or Gate((), 0, ())
    return json_doc({
        "schema_version": COMPARE_SCHEMA, "base": comparison.base, "new": comparison.new,
        "settings": asdict(comparison.settings), "notes": list(comparison.notes),
        "family": {"tested": comparison.tested, "correction": comparison.settings.correction,
                   "guarantee": family_line(comparison, gate)},
        "gate": {"fail_on": gate.fail_on, "gated": gate.gated, "warnings": gate.warnings},
        "summary": comparison.tally(),
        "regressions": [{"cell": r.cell, "scope": r.scope, "name": r.name, "table": r.table}
                        for r in gate.failing],
        "cells": [{
            "label": c.label, "base_cell": c.base_cell, "new_cell": c.new_cell,
            "base_trials": asdict(c.base_trials), "new_trials": asdict(c.new_trials),
            "notes": list(c.notes), "metrics": [_row_doc(r) for r in c.metric_rows()],
            "kernels": [_row_doc(r) for r in c.kernel_rows()],
        } for c in comparison.cells],
    })


def _row_doc(row: Row) -> dict[str, Any]:
    doc = asdict(row) | {"change": row.change}
    if row.scope == "metric":
        for key in ("table", "base_calls", "new_calls", "raw_names"):
            doc.pop(key)
    return doc
