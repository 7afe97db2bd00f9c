"""A comparison as one self-contained HTML page, on the report's page skeleton: inline style, no
script, no network. Names are shortened in cells, whole in their tooltips."""

from __future__ import annotations

from aorta.comparison.gate import Gate
from aorta.comparison.model import CellComparison, Comparison, Row
from aorta.comparison.wording import (cell_header, family_line, gate_line, kernel_cells,
                                      kernel_groups, kernel_head, left_out_line, method_line,
                                      metric_cells, metric_head, p_head, summary_line)
from aorta.rendering import PAGE_END, h, html_table, page_open, short_names

HTML_NAME_WIDTH = 48

_EXTRA_CSS = """
table.rows td{text-align:right;white-space:nowrap}table.rows td.note{text-align:left;
 white-space:normal;min-width:14em}table.rows td.name{text-align:left;font-family:ui-monospace,monospace}
.SLOWER,.LARGER{background:#fbe3e3;font-weight:600}.FASTER,.SMALLER{background:#e2f4e4;
 font-weight:600}.UNCERTAIN,.INCOMPARABLE{background:#fff5d6}
.NEW,.GONE,.CHANGED,.HIGHER,.LOWER{background:#e6eefb}.note{color:#555}
"""


def html_text(comparison: Comparison, top: int = 20, gate: Gate | None = None) -> str:
    """The whole page as one string."""
    parts = [*page_open("aorta compare", _EXTRA_CSS), "<h1>aorta compare</h1>",
             f"<p>base: <code>{h(comparison.base)}</code><br>"
             f"new: <code>{h(comparison.new)}</code><br>{h(method_line(comparison))}"
             f"<br>{h(family_line(comparison, gate))}</p>"]
    parts += [f"<p class='note'>note: {h(n)}</p>" for n in comparison.notes]
    parts += [f"<p class='warn'>warning: {h(w)}</p>" for w in (gate.warnings if gate else ())]
    for cell in comparison.cells:
        parts += _cell(cell, top, p_head(comparison))
    parts.append(f"<p><strong>{h(summary_line(comparison))}</strong></p>")
    if gate is not None and gate.fail_on:
        parts.append(f"<p><strong>{h(gate_line(gate))}</strong></p>")
    return "\n".join(parts + PAGE_END) + "\n"


def _cell(cell: CellComparison, top: int, p: str) -> list[str]:
    parts = [f"<h2>{h(cell_header(cell))}</h2>"]
    parts += [f"<p class='note'>note: {h(n)}</p>" for n in cell.notes]
    if cell.metric_rows():
        parts += _table(metric_head(p), [(r, metric_cells(r)) for r in cell.metric_rows()])
    for table, shown, left_out in kernel_groups(cell, top):
        parts.append(f"<h3>{h(table)}, by absolute change</h3>")
        parts += _table(kernel_head(table, p), [(r, kernel_cells(r)) for r in shown])
        if left_out:
            parts.append(f"<p class='note'>{h(left_out_line(left_out))}</p>")
    return parts


def _table(head: tuple[str, ...], rows: list[tuple[Row, tuple[str, ...]]]) -> list[str]:
    short = short_names([row.name for row, _ in rows], HTML_NAME_WIDTH)
    return ['<div class="scroll">', *html_table(head, [_row(row, short[row.name], cells)
                                                       for row, cells in rows], ' class="rows"'),
            "</div>"]


def _row(row: Row, name: str, cells: tuple[str, ...]) -> str:
    tip = [row.name] + ([f"matched from: {', '.join(row.raw_names)}"]
                        if row.raw_names and row.raw_names != (row.name,) else [])
    return (f"<tr><td class='name' title='{h(chr(10).join(tip))}'>{h(name)}</td>"
            + "".join(f"<td>{h(v)}</td>" for v in cells[1:-2])
            + f"<td class='{row.verdict}'>{h(cells[-2])}</td>"
            f"<td class='note'>{h(row.note)}</td></tr>")
