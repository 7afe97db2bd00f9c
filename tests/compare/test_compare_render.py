"""Renderings read rows and print them; nothing is computed here."""

from __future__ import annotations

import json
import textwrap

from aorta.compare.model import CellComparison, CompareSettings, Comparison, Row, TrialCounts
from aorta.compare.render import json_text, markdown_lines, text_lines
from aorta.compare.render_html import html_text

ROWS = (
    Row("c", "metric", "wall_s", "time", "SLOWER", 5, 5, 1.0, 1.2, 1.2, 1.15, 1.26, 0.0079),
    Row("c", "metric", "rocprof_kernel_count", "count", "CHANGED", 5, 5, 10, 12, 1.2,
        note="10 -> 12"),
    Row("c", "metric", "cpu_user_s", "time", "UNCERTAIN", 5, 5, 0.5, 0.52, 1.04, 0.9, None,
        0.42, more_trials=12),
    Row("c", "kernel", "gemm<float>", "time", "SLOWER", 5, 5, 2.0, 2.5, 1.25, 1.2, 1.3, 0.0079,
        table="rocprof_kernels", base_calls=1, new_calls=1, raw_names=("gemm<float>",)),
    Row("c", "kernel", "fresh", "time", "NEW", 5, 5, None, 0.75, table="rocprof_kernels",
        note="only in new (5 of 5 trials)"),
    Row("c", "kernel", "old|pipe", "time", "GONE", 5, 5, 0.1, None, table="rocprof_kernels",
        note="only in base (5 of 5 trials)"),
)
COMPARISON = Comparison("runs/a", "runs/b", CompareSettings(), (CellComparison(
    "c", "c", "c", TrialCounts(5, 0, 0, 0), TrialCounts(5, 0, 1, 0), ROWS,
    ("new: only the 5 passing trial(s) of 6 are compared (1 errored)",)),))


def test_text_golden():
    expected = textwrap.dedent("""\
        base: runs/a
        new:  runs/b
        ratio = new median / base median; 95% bootstrap interval (2000 resamples, seed 0); Mann-Whitney p; SAME within +/-5.0%; alpha 0.05

        cell c: base 5/5 passed, new 5/6 passed (1 errored)
          note: new: only the 5 passing trial(s) of 6 are compared (1 errored)
          metric                  base     new  ratio  interval        p      verdict                    note
          wall_s                 1.000   1.200  1.200  [1.150, 1.260]  0.008  SLOWER
          rocprof_kernel_count      10      12  1.200  -               -      CHANGED                    10 -> 12
          cpu_user_s            0.5000  0.5200  1.040  [0.900, inf]    0.420  UNCERTAIN (~12 more/side)

          rocprof_kernels, by absolute change:
          kernel       base ms  new ms  change ms  ratio  interval        p      verdict  note
          fresh              -  0.7500      +0.75      -  -               -      NEW      only in new (5 of 5 trials)
          gemm<float>    2.000   2.500       +0.5  1.250  [1.200, 1.300]  0.008  SLOWER
          ... 1 more row(s) (1 GONE); --top 0 lists all

        summary: 2 SLOWER, 1 UNCERTAIN, 1 CHANGED, 1 NEW, 1 GONE""")
    assert "\n".join(text_lines(COMPARISON, top=2)) == expected


def test_markdown_escapes_and_lists_every_kernel():
    lines = markdown_lines(COMPARISON, top=0)
    assert "| old\\|pipe | 0.1000 | - | -0.1 | - | - | - | GONE | only in base (5 of 5 trials) |" \
        in lines
    assert lines[-1] == "**summary: 2 SLOWER, 1 UNCERTAIN, 1 CHANGED, 1 NEW, 1 GONE**"


def test_json_is_strict_and_complete():
    doc = json.loads(json_text(COMPARISON, regressions=[ROWS[0]]))
    assert doc["schema_version"] == 1
    assert doc["summary"] == {"SLOWER": 2, "UNCERTAIN": 1, "CHANGED": 1, "NEW": 1, "GONE": 1}
    assert doc["regressions"] == [{"cell": "c", "scope": "metric", "name": "wall_s",
                                   "table": None}]
    cell = doc["cells"][0]
    assert [k["name"] for k in cell["kernels"]] == ["fresh", "gemm<float>", "old|pipe"]
    uncertain = cell["metrics"][2]
    assert uncertain["ci_high"] is None and uncertain["more_trials"] == 12
    assert "table" not in cell["metrics"][0]
    assert cell["new_trials"] == {"passed": 5, "failed": 0, "errored": 1, "missing": 0}
    assert doc["settings"]["threshold"] == 0.05


def test_html_is_self_contained_and_escaped():
    page = html_text(COMPARISON)
    assert page.startswith("<!DOCTYPE html>")
    assert "http://" not in page and "https://" not in page and "<script" not in page
    assert "gemm&lt;float&gt;" in page and "gemm<float>" not in page
    assert "<td class='SLOWER'>SLOWER</td>" in page
    assert "UNCERTAIN (~12 more/side)" in page
