"""Markdown and JSON carry what the HTML page shows."""

from __future__ import annotations

import json
import re
import textwrap
from dataclasses import replace
from html import escape, unescape
from pathlib import Path

import pytest

from aorta.report import build_report, render_html, render_json, render_markdown
from aorta.rendering import md_code, md_text
from report_helpers import kernels, HOSTILE, trial


def test_json_md_and_html_name_the_same_cells_and_metrics(real_run: Path) -> None:
    report = build_report(real_run)
    doc = json.loads(render_json(report, real_run))
    md = render_markdown(report)
    page = render_html(report)
    cells = [c["name"] for c in doc["cells"]]
    assert cells == ["c1024", "c4096", "bad"]
    metrics = sorted({k for c in doc["cells"] for k in c["metrics"]})
    assert metrics == sorted(report.metrics) and "proton_gpu_time_ms" in metrics
    metric_rows = re.findall(r"^\| `([a-z_0-9]+)` \| ", md.split("## Metrics")[1], flags=re.M)
    assert sorted(set(metric_rows)) == metrics
    assert re.findall(r"^\| `(\w+)` \| \d", md.split("## Cells")[1], flags=re.M)[:3] == cells
    for name in cells + metrics:
        assert f">{name}<" in page or f">{name} <" in page


def test_json_document_shape_and_numbers(real_run: Path) -> None:
    doc = json.loads(render_json(build_report(real_run), real_run))
    assert doc["schema_version"] == 1 and doc["run_dir"] == str(real_run)
    c1024 = doc["cells"][0]
    assert c1024["metrics"]["proton_kernel_count"]["median"] == 21
    assert [p["trial"] for p in c1024["metrics"]["wall_s"]["points"]] == [0, 1, 2]
    assert c1024["kernels"][0]["bars"][0]["name"] == "softmax_kernel"
    assert doc["failures"][0]["repeats"] == ["trial_1", "trial_2"]
    assert doc["header"]["gpus"][0]["name"] == "NVIDIA H200"
    assert {t["name"] for t in c1024["trials"]} == {"trial_0", "trial_1", "trial_2"}


def test_json_is_strict_even_with_non_finite_statistics(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0), trial("a", 1)]})
    report = build_report(run_dir)
    wall = report.cells[0].metrics["wall_s"]
    report.cells[0].metrics["wall_s"] = replace(wall, std=float("inf"), mean=float("nan"))
    text = render_json(report, run_dir)
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["cells"][0]["metrics"]["wall_s"]["std"] is None


def test_markdown_fences_hostile_stderr(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0, "fail", stderr_tail="plain\n````\nafter\n")]})
    md = render_markdown(build_report(run_dir))
    block = md.split("End of stderr:")[1]
    fence = re.search(r"^(`{3,})text$", block, flags=re.M)
    assert fence is not None and len(fence.group(1)) == 5     # longer than the ```` inside
    body = block.split(fence.group(0))[1].split("\n" + fence.group(1) + "\n")[0]
    assert body.rstrip().endswith("after")


def test_markdown_never_carries_raw_html(make_run) -> None:
    """Issue 11: `<script>` from a payload or a kernel name never reaches report.md raw."""
    hostile_kernel = '<img src=x onerror="alert(1)">'
    run_dir = make_run({"a": [
        trial("a", 0, metrics={"nsys_kernels": kernels((hostile_kernel, 1, 2.0))}),
        trial("a", 1, "fail", stderr_tail=HOSTILE + "\n````\nafter\n",
              reason="<script>x</script>")]})
    md = render_markdown(build_report(run_dir))
    assert "<script" not in md and "<img" not in md and "<marquee" not in md
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in md   # shown, escaped
    assert "<pre>" in md and md.count("<pre>") == md.count("</pre>")


def test_markdown_tables_survive_pipes_and_backticks() -> None:
    assert md_code("a|b") == "`a\\|b`"
    assert md_code("x `y` z") == "``x `y` z``"
    assert md_code("`edge") == "`` `edge ``"
    assert md_code("a<b>|`c`") == "<code>a&lt;b&gt;&#124;&#96;c&#96;</code>"
    assert md_text("<b>|*x*|\n  y") == "&lt;b&gt;\\|\\*x\\*\\| y"


def test_markdown_golden_for_a_small_run(make_run) -> None:
    run_dir = make_run({"a": [trial("a", 0, wall_s=1.0), trial("a", 1, wall_s=3.0)]},
                       env=None, collectors=())
    md = render_markdown(build_report(run_dir))
    assert md.startswith("# aorta report: run\n\n2/2 trials passed, 0 failed, 0 errored, "
                         "0 missing; 1 cell(s); collectors: none\n")
    cells = md.split("## Cells\n\n")[1].split("\n\n")[0]
    assert cells == textwrap.dedent("""\
        | cell | trials | pass | fail | error | missing | wall median | captures | flags |
        |---|---:|---:|---:|---:|---:|---:|---|---|
        | `a` | 2 | 2 | 0 | 0 | 0 | 2 s | - |  |""")
    assert "| `wall_s` | s | 2 [1–3] ±1.414 (n=2) |" in md
    assert "- `a`: 0: 1, 1: 3" in md
    assert "- [env] env.json is missing or unreadable" in md


def test_markdown_keeps_long_and_python_names_whole_as_rendered_text(make_run) -> None:
    """Issue 25: Markdown shows every name whole (issue 12.3 had shortened it to 80), and a
    Markdown renderer shows `<listcomp>` and `<built-in method ...>` as the text they are; the
    page's bar label is the short name, its tooltip the whole one."""
    markdown_it = pytest.importorskip("markdown_it")
    name = ("void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>("
            "cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)")
    python_names = ["examples/quickstart/matmul.py:20(<listcomp>)",
                    "<built-in method __new__ of type object>"]
    table = kernels((name, 1, 2.0), *((n, 1, 1.0) for n in python_names))
    run_dir = make_run({"a": [trial("a", 0, metrics={"nsys_kernels": table})]})
    built = build_report(run_dir)
    rendered = markdown_it.MarkdownIt("commonmark").enable("table").render(render_markdown(built))
    cells = [unescape(re.sub(r"<[^>]+>", "", cell))
             for cell in re.findall(r"<td>(.*?)</td>", rendered)]
    assert {name, *python_names} <= set(cells), cells
    assert name in render_json(built, run_dir)
    page = render_html(built)
    assert ">cutlass::Kernel2&lt;cutlass_80_simt_sgemm_256x128_8x4_nn_align1&gt;</text>" in page
    assert f"<title>{escape(name)}" in page   # the tooltip keeps the full name
