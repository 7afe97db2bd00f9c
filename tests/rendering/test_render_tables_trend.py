"""The render kit's tables, strict JSON and trend plot."""

from __future__ import annotations

import json
import textwrap
import xml.etree.ElementTree as ET

from aorta.rendering import html_cells, html_table, json_text, md_table, text_table
from aorta.rendering.trend import TrendMark, TrendRun, trend_plot


def test_text_table_aligns_columns_and_leaves_no_trailing_space() -> None:
    rows = [("cell", "pass", "note"), ("naive", "3", ""), ("a", "12", "x")]
    assert text_table(rows, right=(1,), indent="> ") == textwrap.dedent("""\
        > cell   pass  note
        > naive     3
        > a        12  x""").splitlines()


def test_md_table_marks_right_aligned_columns() -> None:
    assert md_table(("a", "b", "c"), [("x", "1", "")], "lr") == [
        "| a | b | c |", "|---|---:|---|", "| x | 1 |  |"]


def test_html_table_escapes_its_head() -> None:
    assert html_table(("a<b",), ["<tr><td>1</td></tr>"], " class='t'") == [
        "<table class='t'><tr><th>a&lt;b</th></tr>", "<tr><td>1</td></tr>", "</table>"]


def test_html_cells_escape_every_cell() -> None:
    assert html_cells(("1", "<b>", 2)) == "<td>1</td><td>&lt;b&gt;</td><td>2</td>"


def test_json_text_is_strict() -> None:
    text = json_text({"a": [float("nan"), (1.5, float("inf"))]})
    assert json.loads(text) == {"a": [None, [1.5, None]]} and not text.endswith("\n")


def test_trend_plot_marks_changes_and_escapes_text() -> None:
    runs = [TrendRun((1.0, 1.1), 1.05, "run <0>", "abc", "2026-01-01"),
            TrendRun((2.0,), 2.0, "run 1", "def", "2026-01-02")]
    svg = trend_plot("wall_s <x>", "wall_s (s)", runs, [TrendMark(1, "#d62728", "SLOWER")])
    root = ET.fromstring(svg)
    assert root.get("aria-label") == "wall_s <x>" and root.get("class") == "chart trend"
    assert [c.get("stroke") for c in root.iter("line") if c.get("class") == "change"] == [
        "#d62728"]
    assert len(list(root.iter("circle"))) == 5
    assert "run <0>" in [t.text for t in root.iter("title")]
    assert trend_plot("x", "x", [], []) == ""


HOSTILE = "void k<int>(float*) [click](https://evil.example) ![i](https://x/p.png) \x1b[2J\x07\u202egnp.exe"


def test_kernel_names_cannot_drive_a_terminal_or_reorder_text() -> None:
    from aorta.rendering import h, md_code, md_text

    for shown in (*text_table([["name"], [HOSTILE]]), md_text(HOSTILE), md_code(HOSTILE),
                  h(HOSTILE), md_code("plain \x1b[31mred")):
        assert not any(c in shown for c in "\x1b\x07\u202e"), shown
    assert "\\x1b[2J\\x07\\u202egnp.exe" in text_table([["name"], [HOSTILE]])[1]
    assert text_table([["a\nb"]]) == ["a\\nb"]


def test_a_name_in_a_code_element_cannot_open_a_link_or_an_image() -> None:
    from aorta.rendering import md_code

    shown = md_code(HOSTILE)
    assert shown.startswith("<code>") and shown.endswith("</code>")
    assert not any(c in shown[len("<code>"):-len("</code>")] for c in "[]!*_`|<>")
