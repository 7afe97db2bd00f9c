"""Tables for text, Markdown and HTML, from cells already written and escaped for the format."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from aorta.base.names import visible
from aorta.rendering.escape import h


def text_table(rows: Sequence[Sequence[str]], right: Collection[int] = (),
               indent: str = "") -> list[str]:
    """Columns two spaces apart, padded to their widest cell; columns in `right` (numbers)
    align right. The first row is the head. Lines carry no trailing spaces; control
    characters in a cell (a newline too) are shown escaped."""
    rows = [[visible(v, keep="") for v in row] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [(indent + "  ".join(v.rjust(w) if i in right else v.ljust(w)
                                for i, (v, w) in enumerate(zip(row, widths)))).rstrip()
            for row in rows]


def md_table(head: Sequence[str], rows: Sequence[Sequence[str]], align: str = "") -> list[str]:
    """A pipe table; `align` has a letter per column: `r` right-aligns (numbers), else left."""
    marks = "".join("---:|" if a == "r" else "---|" for a in align.ljust(len(head)))
    return ["| " + " | ".join(head) + " |", "|" + marks,
            *("| " + " | ".join(row) + " |" for row in rows)]


def html_table(head: Sequence[str], rows: Sequence[str], attrs: str = "") -> list[str]:
    """`<table>`, a head row of escaped `head` text, the `<tr>` lines in `rows`, `</table>`."""
    cells = "".join(f"<th>{h(text)}</th>" for text in head)
    return [f"<table{attrs}><tr>{cells}</tr>", *rows, "</table>"]


def html_cells(cells: Iterable[object]) -> str:
    """A `<td>` of escaped text per cell, for the rows `html_table` takes."""
    return "".join(f"<td>{h(text)}</td>" for text in cells)
