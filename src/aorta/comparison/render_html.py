"""A comparison as one self-contained HTML page: inline style, no script, no network."""

from __future__ import annotations

from aorta.comparison.gate import Gate
from aorta.comparison.model import CellComparison, Comparison, Row
from aorta.comparison.wording import (cell_header, family_line, gate_line, kernel_cells,
                                      kernel_groups, kernel_head, left_out_line, method_line,
                                      metric_cells, metric_head, p_head, summary_line)
from aorta.rendering import h, short_name

HTML_NAME_WIDTH = 80

_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: .5em 0 1.5em; }
th, td { border-bottom: 1px solid #ddd; padding: .25em .6em; text-align: right; }
th { background: #f4f4f4; }
td.name, th.name, td.note { text-align: left; }
td.name { font-family: ui-monospace, monospace; max-width: 40em; overflow-wrap: anywhere; }
.SLOWER, .LARGER { background: #fbe3e3; font-weight: 600; }
.FASTER, .SMALLER { background: #e2f4e4; font-weight: 600; }
.UNCERTAIN, .INCOMPARABLE { background: #fff5d6; }
.NEW, .GONE, .CHANGED, .HIGHER, .LOWER { background: #e6eefb; }
.note { color: #555; }
.warning { color: #8a4b00; font-weight: 600; }
"""


def html_text(comparison: Comparison, top: int = 20, gate: Gate | None = None) -> str:
    """The whole page as one string."""
    parts = ["<!DOCTYPE html>", "<html><head><meta charset='utf-8'>",
             "<title>aorta compare</title>", f"<style>{_STYLE}</style></head><body>",
             "<h1>aorta compare</h1>",
             f"<p>base: <code>{h(comparison.base)}</code><br>"
             f"new: <code>{h(comparison.new)}</code><br>{h(method_line(comparison))}"
             f"<br>{h(family_line(comparison, gate))}</p>"]
    parts += [f"<p class='note'>note: {h(n)}</p>" for n in comparison.notes]
    parts += [f"<p class='warning'>warning: {h(w)}</p>" for w in (gate.warnings if gate else ())]
    for cell in comparison.cells:
        parts += _cell(cell, top, p_head(comparison))
    parts.append(f"<p><strong>{h(summary_line(comparison))}</strong></p>")
    if gate is not None and gate.fail_on:
        parts.append(f"<p><strong>{h(gate_line(gate))}</strong></p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def _cell(cell: CellComparison, top: int, p: str) -> list[str]:
    parts = [f"<h2>{h(cell_header(cell))}</h2>"]
    parts += [f"<p class='note'>note: {h(n)}</p>" for n in cell.notes]
    if cell.metric_rows():
        parts.append(_table(metric_head(p), [_row(r, metric_cells(r)) for r in cell.metric_rows()]))
    for table, shown, left_out in kernel_groups(cell, top):
        parts.append(f"<h3>{h(table)}, by absolute change</h3>")
        parts.append(_table(kernel_head(table, p), [_row(r, kernel_cells(r)) for r in shown]))
        if left_out:
            parts.append(f"<p class='note'>{h(left_out_line(left_out))}</p>")
    return parts


def _table(head: tuple[str, ...], rows: list[str]) -> str:
    cells = "".join(f"<th class='name'>{h(text)}</th>" if i in (0, len(head) - 1)
                    else f"<th>{h(text)}</th>" for i, text in enumerate(head))
    return f"<table><thead><tr>{cells}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _row(row: Row, cells: tuple[str, ...]) -> str:
    tip = [row.name] + ([f"matched from: {', '.join(row.raw_names)}"]
                        if row.raw_names and row.raw_names != (row.name,) else [])
    return (f"<tr><td class='name' title='{h(chr(10).join(tip))}'>"
            f"{h(short_name(row.name, HTML_NAME_WIDTH))}</td>"
            + "".join(f"<td>{h(v)}</td>" for v in cells[1:-2])
            + f"<td class='{row.verdict}'>{h(cells[-2])}</td>"
            f"<td class='note'>{h(row.note)}</td></tr>")
