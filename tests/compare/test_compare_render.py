"""Renderings read rows and print them; nothing is computed here."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import replace
from html import unescape

import pytest

from aorta.comparison.gate import Gate
from aorta.comparison.model import CellComparison, CompareSettings, Comparison, Row, TrialCounts
from aorta.comparison.render import json_text, markdown_lines, text_lines
from aorta.comparison.render_html import html_text

CUTLASS = ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>"
           "(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")
ROWS = (
    Row("c", "metric", "wall_s", "time", "SLOWER", 5, 5, 1.0, 1.2, 1.2, 1.15, 1.26, 0.0079),
    Row("c", "metric", "rocprof_kernel_count", "count", "CHANGED", 5, 5, 10, 12, 1.2,
        note="10 -> 12"),
    Row("c", "metric", "cpu_user_s", "time", "UNCERTAIN", 5, 5, 0.5, 0.52, 1.04, 0.9, None,
        0.42, more_trials=12, more_trials_high=40),
    Row("c", "kernel", "gemm<float>", "time", "SLOWER", 5, 5, 2.0, 2.5, 1.25, 1.2, 1.3, 0.0079,
        table="rocprof_kernels", base_calls=1, new_calls=1, raw_names=("gemm<float>",)),
    Row("c", "kernel", "fresh", "time", "NEW", 5, 5, None, 0.75, table="rocprof_kernels",
        note="only in new (5 of 5 trials)"),
    Row("c", "kernel", "old|pipe", "time", "GONE", 5, 5, 0.1, None, table="rocprof_kernels",
        note="only in base (5 of 5 trials)"),
)
COMPARISON = Comparison("runs/a", "runs/b", CompareSettings(), (CellComparison(
    "c", "c", "c", TrialCounts(5, 0, 0, 0), TrialCounts(5, 0, 1, 0), ROWS,
    ("new: only the 5 passing trial(s) of 6 are compared (1 errored)",)),), tested=3)
GATE = Gate(("slower",), 2, (ROWS[0], ROWS[3]))


def test_text_golden():
    expected = textwrap.dedent("""\
        base: runs/a
        new:  runs/b
        ratio = new median / base median; 95% interval: the bootstrap's, computed exactly (no resampling); Mann-Whitney p; SAME within +/-5.0%; alpha 0.05
        false alarms: bounded per row (alpha 0.05 each), over 3 tested row(s); 2 gated by --fail-on slower; so among many unchanged rows one can come out FASTER or SLOWER by chance (--correction holm bounds the whole comparison)

        cell c: base 5/5 passed, new 5/6 passed (1 errored)
          note: new: only the 5 passing trial(s) of 6 are compared (1 errored)
          metric                base   new  ratio  interval        p      verdict                      note
          wall_s                   1   1.2  1.200  [1.150, 1.260]  0.008  SLOWER
          rocprof_kernel_count    10    12  1.200  -               -      CHANGED                      10 -> 12
          cpu_user_s             0.5  0.52  1.040  [0.900, inf]    0.420  UNCERTAIN (12-40 more/side)

          rocprof_kernels, by absolute change:
          kernel       base ms  new ms  change ms  ratio  interval        p      verdict  note
          fresh              -    0.75      +0.75      -  -               -      NEW      only in new (5 of 5 trials)
          gemm<float>        2     2.5       +0.5  1.250  [1.200, 1.300]  0.008  SLOWER
          ... 1 more row(s) (1 GONE); --top 0 lists all

        summary: 2 SLOWER, 1 UNCERTAIN, 1 CHANGED, 1 NEW, 1 GONE
        regressions (slower): 2""")
    assert "\n".join(text_lines(COMPARISON, top=2, gate=GATE)) == expected


def with_kernel(name: str, **fields: object) -> Comparison:
    kernel = replace(ROWS[3], name=name, raw_names=(name,), **fields)
    cell = replace(COMPARISON.cells[0], rows=ROWS + (kernel,))
    return replace(COMPARISON, cells=(cell,))


def test_long_kernel_names_fit_the_terminal():
    # Issue 12.3: a templated name hundreds of characters long pushed the ratio and verdict
    # columns off the screen. With a width, every column but the note fits in it.
    comparison = with_kernel(CUTLASS * 2)
    for width in (100, 120, 160):
        lines = text_lines(comparison, top=0, width=width)
        table = [line for line in lines if "cutlass" in line]
        assert table, lines
        for line in table:
            assert line.index("SLOWER") + len("SLOWER") <= width
    unlimited = text_lines(comparison, top=0)
    assert any(CUTLASS * 2 in line for line in unlimited)


def test_short_names_stay_distinct_in_one_table():
    comparison = with_kernel(CUTLASS.replace("256x128", "128x256"))
    comparison = replace(comparison, cells=(replace(comparison.cells[0], rows=(
        comparison.cells[0].rows + (replace(ROWS[3], name=CUTLASS, raw_names=(CUTLASS,)),))),))
    lines = text_lines(comparison, top=0, width=100)
    shown = [re.split(r"\s{2,}", line.strip())[0] for line in lines if "cutlass" in line]
    assert len(shown) == 2 and shown[0] != shown[1]
    assert all(len(name) < len(CUTLASS) for name in shown)


def test_markdown_escapes_and_lists_every_kernel_whole():
    lines = markdown_lines(with_kernel(CUTLASS), top=0, gate=GATE)
    assert "| old\\|pipe | 0.1 | - | -0.1 | - | - | - | GONE | only in base (5 of 5 trials) |" \
        in lines
    assert any(CUTLASS.replace("<", "&lt;").replace(">", "&gt;") in line for line in lines)
    assert lines[-2:] == ["**summary: 3 SLOWER, 1 UNCERTAIN, 1 CHANGED, 1 NEW, 1 GONE**",
                          "**regressions (slower): 2**"]
    assert any(line.startswith("- false alarms: bounded per row") for line in lines)


def test_json_is_strict_and_complete():
    doc = json.loads(json_text(with_kernel(CUTLASS), GATE))
    assert doc["schema_version"] == 2
    assert doc["summary"] == {"SLOWER": 3, "UNCERTAIN": 1, "CHANGED": 1, "NEW": 1, "GONE": 1}
    assert [r["name"] for r in doc["regressions"]] == ["wall_s", "gemm<float>"]
    assert doc["family"]["tested"] == 3 and doc["family"]["correction"] == "none"
    assert "per row" in doc["family"]["guarantee"]
    assert doc["gate"] == {"fail_on": ["slower"], "gated": 2, "warnings": []}
    cell = doc["cells"][0]
    assert CUTLASS in [k["name"] for k in cell["kernels"]]          # the full name
    uncertain = cell["metrics"][2]
    assert uncertain["ci_high"] is None
    assert (uncertain["more_trials"], uncertain["more_trials_high"]) == (12, 40)
    assert uncertain["p_adjusted"] is None
    assert "table" not in cell["metrics"][0]
    assert cell["new_trials"] == {"passed": 5, "failed": 0, "errored": 1, "missing": 0}
    assert doc["settings"]["threshold"] == 0.05 and doc["settings"]["correction"] == "none"
    assert "seed" not in doc["settings"] and "resamples" not in doc["settings"]


def test_html_is_self_contained_and_escaped():
    page = html_text(with_kernel(CUTLASS), gate=GATE)
    assert page.startswith("<!doctype html>") and page.endswith("</body>\n</html>\n")
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert "gemm&lt;float&gt;" in page and "gemm<float>" not in page
    assert "<td class='SLOWER'>SLOWER</td>" in page
    assert "UNCERTAIN (12-40 more/side)" in page
    assert "false alarms: bounded per row" in page
    # The cell shows a short name; its tooltip keeps the whole one.
    assert f"title='{CUTLASS.replace('<', '&lt;').replace('>', '&gt;')}'" in page
    assert "regressions (slower): 2" in page


def test_corrected_p_is_the_one_shown():
    settings = CompareSettings(correction="holm")
    rows = (replace(ROWS[0], p_adjusted=0.0237),)
    comparison = Comparison("a", "b", settings, (replace(COMPARISON.cells[0], rows=rows),),
                            tested=3)
    lines = text_lines(comparison)
    assert any("p (holm)" in line for line in lines)
    assert any(line.strip().startswith("wall_s") and "0.024" in line for line in lines)
    assert any("Holm-adjusted" in line for line in lines)


def test_unbounded_advice_reads_as_a_floor():
    open_row = replace(ROWS[2], more_trials_high=None)
    comparison = replace(COMPARISON, cells=(replace(COMPARISON.cells[0], rows=(open_row,)),))
    assert any("UNCERTAIN (12+ more/side)" in line for line in text_lines(comparison))


def test_counts_and_names_read_as_the_report_writes_them():
    """Counts carry thousands separators in every format (they printed as 1.09215e+06), and
    Markdown cells escape HTML (a cProfile `<listcomp>` vanished when rendered)."""
    count = replace(ROWS[1], base_median=1092148.0, new_median=2776660.0)
    listcomp = replace(ROWS[3], name="matmul.py:20(<listcomp>)", raw_names=())
    cell = replace(COMPARISON.cells[0], rows=(count, listcomp))
    comparison = replace(COMPARISON, cells=(cell,))
    text = "\n".join(text_lines(comparison))
    assert "1,092,148  2,776,660" in text and "e+06" not in text
    assert "1,092,148" in html_text(comparison)
    md = markdown_lines(comparison)
    assert any(line.startswith("| rocprof_kernel_count | 1,092,148 | 2,776,660 |") for line in md)
    assert any(line.startswith("| matmul.py:20(&lt;listcomp&gt;) | 2 | 2.5 |") for line in md)
    assert not any("<listcomp>" in line for line in md)


def test_markdown_names_render_as_their_text():
    """Issue 25: a Markdown renderer shows `<listcomp>` and `<built-in method ...>` (which
    vanished as HTML tags), with the name whole; the same escaping as the report's."""
    markdown_it = pytest.importorskip("markdown_it")
    names = ["examples/quickstart/matmul.py:20(<listcomp>)", "<built-in method __new__ of type "
             "object>", "a|b `c` *d* [e](f) &amp;", CUTLASS]
    rows = tuple(replace(ROWS[3], name=n, raw_names=()) for n in names)
    comparison = replace(COMPARISON, cells=(replace(COMPARISON.cells[0], rows=rows),))
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(
        "\n".join(markdown_lines(comparison, top=0)))
    cells = [unescape(re.sub(r"<[^>]+>", "", cell))
             for cell in re.findall(r"<td>(.*?)</td>", rendered)]
    assert set(names) <= set(cells), cells
