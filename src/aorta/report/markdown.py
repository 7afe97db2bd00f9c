"""The report as Markdown, for terminals and pull requests: the same sections as the HTML
page, with trial values written out where the page draws them.

Run-derived text is escaped for Markdown (`|`, backticks...) and for the HTML that Markdown
renderers pass through: `<`, `>` and `&` never appear raw. Code that holds them is written as
an HTML `<code>`/`<pre>` element with those characters escaped; other code sits in backtick
spans and fences longer than any backtick run inside it, so it cannot end early.
"""

from __future__ import annotations

import re

from aorta.comparison.display import short_names
from aorta.report.model import Report
from aorta.report.numbers import fmt, fmt_with_unit, spread_text, unit_of
from aorta.report.sections import (capture_text, cell_flags, failure_facts, header_rows,
                                   overhead_text, repeats_text, verdict_counts)

__all__ = ["markdown_lines", "render_markdown", "md_text", "md_code"]

#: Kernel names longer than this are shortened in tables (report --format json keeps them whole).
KERNEL_NAME_WIDTH = 80
_MD_SPECIAL = re.compile(r"([\\`*\[\]|])")
_HTML_SPECIAL = re.compile(r"[<>&]")


def render_markdown(report: Report) -> str:
    return "\n".join(markdown_lines(report)) + "\n"


def markdown_lines(report: Report) -> list[str]:
    h = report.header
    lines = [f"# aorta report: {md_text(h.run)}", "", md_text(verdict_counts(report)), "",
             "## Run", ""]
    lines += [f"- {key}: {md_code(value)}" for key, value in header_rows(h)]
    if len(h.gpus) > 1 or any(g.index for g in h.gpus):
        lines += [f"  - GPU {md_text(g.index or '?')}: {md_text(g.name)}, driver "
                  f"{md_text(g.driver or '-')}, memory {md_text(g.memory or '-')}"
                  for g in h.gpus]
    lines += _warnings(report) + _cells(report) + _metrics(report) + _overhead(report)
    lines += _distributions(report)
    lines += _kernels(report) + _failures(report) + _trials(report)
    return lines


def _warnings(report: Report) -> list[str]:
    lines = ["", "## Warnings", ""]
    if not report.warnings:
        return lines + ["None."]
    return lines + [f"- [{n.kind}] " + (f"{md_code(n.cell)}: " if n.cell else "")
                    + md_text(n.message) for n in report.warnings]


def _cells(report: Report) -> list[str]:
    lines = ["", "## Cells", "", "| cell | trials | pass | fail | error | missing | wall median "
             "| captures | flags |", "|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for c in report.cells:
        wall = c.metrics.get("wall_s")
        lines.append(f"| {md_code(c.name)} | {c.planned} | {c.passed} | {c.failed} | "
                     f"{c.errored} | {c.missing} | "
                     f"{fmt_with_unit(wall.median, 's') if wall else '-'} | "
                     f"{md_text(capture_text(c))} | {md_text(', '.join(cell_flags(c)))} |")
    return lines


def _metrics(report: Report) -> list[str]:
    lines = ["", "## Metrics", "",
             "Over passing trials: median [min–max] ±standard deviation (n trials).", ""]
    if not report.metrics:
        return lines + ["No trial passed, so there is no figure to show."]
    lines += ["| metric | unit | " + " | ".join(md_code(c.name) for c in report.cells) + " |",
              "|---|---|" + "---:|" * len(report.cells)]
    for key in report.metrics:
        cells = []
        for c in report.cells:
            m = c.metrics.get(key)
            cells.append(spread_text(m.median, m.min, m.max, m.std, m.n) if m else "-")
        lines.append(f"| {md_code(key)} | {unit_of(key) or '-'} | " + " | ".join(cells) + " |")
    return lines


def _overhead(report: Report) -> list[str]:
    rows = [(c, o) for c in report.cells for o in c.overhead.values()]
    if not rows:
        return []
    lines = ["", "## Collector overhead", "",
             "Median over profiled trials divided by the median over baseline trials (the same "
             "command with no collector, interleaved).", "",
             "| cell | metric | profiled median | baseline median | ratio | interval | "
             "n profiled / baseline |", "|---|---|---:|---:|---:|---|---:|"]
    for cell, o in rows:
        unit = unit_of(o.metric)
        profiled, base = cell.metrics.get(o.metric), cell.baseline.get(o.metric)
        ratio, interval = overhead_text(o)
        lines.append(f"| {md_code(cell.name)} | {md_code(o.metric)} | "
                     f"{fmt_with_unit(profiled.median if profiled else None, unit)} | "
                     f"{fmt_with_unit(base.median if base else None, unit)} | {ratio} | "
                     f"{interval} | {o.n_profiled} / {o.n_baseline} |")
    return lines


def _distributions(report: Report) -> list[str]:
    lines = ["", "## Distributions", "", "Each passing trial's value, by trial index."]
    for key in report.metrics:
        unit = unit_of(key)
        lines += ["", f"{md_code(key)}" + (f" ({unit})" if unit else "") + ":", ""]
        for c in report.cells:
            for m, label in ((c.metrics.get(key), ""), (c.baseline.get(key), " (baseline)")):
                if m:
                    values = ", ".join(f"{p.trial}: {fmt(p.value)}" for p in m.points)
                    lines.append(f"- {md_code(c.name)}{label}: {values}")
    return lines


def _kernels(report: Report) -> list[str]:
    lines = ["", "## Top kernels", "",
             "Median total time per passing trial; a trial whose table does not list an entry "
             "counts as 0 ms."]
    charts = [(c, chart) for c in report.cells for chart in c.kernels]
    if not charts:
        return lines + ["", "No collector in this run published a per-kernel table."]
    for cell, chart in charts:
        lines += ["", f"### {md_text(cell.name)}: {md_text(chart.table)} (top {len(chart.bars)} "
                      f"of {chart.listed}, {chart.trials} passing trial(s))", "",
                  "| # | name | median ms | calls | listed in |", "|---:|---|---:|---:|---:|"]
        short = short_names([bar.name for bar in chart.bars], KERNEL_NAME_WIDTH)
        lines += [f"| {rank} | {md_code(short[bar.name])} | {fmt(bar.median_ms)} | "
                  f"{fmt(bar.calls)} | {bar.trials}/{chart.trials} |"
                  for rank, bar in enumerate(chart.bars, 1)]
    return lines


def _failures(report: Report) -> list[str]:
    lines = ["", "## Failures", ""]
    if not report.failures:
        return lines + ["Every trial that ran passed."]
    for f in report.failures:
        facts = failure_facts(f)
        also = f" (and {repeats_text(f)})" if f.repeats else ""
        lines += [f"### {f.verdict}: {md_text(f.cell)}/{f.name}{also}", "",
                  md_text(f.reason) + (f" ({facts})" if facts else "")]
        lines += ["", *(f"- {md_text(c)} capture {md_text(state)}"
                        for c, state in f.captures.items())] if f.captures else []
        lines += ["", "Artifacts: " + (", ".join(md_code(p) for p in f.files.values()) or "none")]
        if f.stderr_tail:
            lines += ["", "End of stderr:", "", *md_block(f.stderr_tail.rstrip("\n"))]
        else:
            lines += ["", "stderr was empty." if f.stderr_tail == "" else "No stderr was kept."]
        lines.append("")
    return lines


def _trials(report: Report) -> list[str]:
    lines = ["", "## Trials and artifacts", "", "Paths are relative to the run directory.", "",
             "| trial | verdict | wall | reason | artifacts |", "|---|---|---:|---|---|"]
    for c in report.cells:
        lines += [f"| {md_code(t.dir.rstrip('/'))} | {t.verdict} | "
                  f"{fmt_with_unit(t.wall_s, 's')} | {md_text(t.reason)} | "
                  f"{', '.join(md_code(label) for label in t.files) or '-'} |"
                  for t in c.trials]
    return lines


def md_text(text: str) -> str:
    """Run-derived text on one line, with Markdown's and HTML's active characters escaped."""
    flat = _MD_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
    return _HTML_SPECIAL.sub(lambda m: _ENTITY[m.group(0)], flat)


def md_code(text: str) -> str:
    """An inline code span that survives backticks, table pipes and HTML inside `text`."""
    flat = " ".join(str(text).split())
    if _HTML_SPECIAL.search(flat):
        escaped = _HTML_SPECIAL.sub(lambda m: _ENTITY[m.group(0)], flat)
        return "<code>" + escaped.replace("|", "&#124;").replace("`", "&#96;") + "</code>"
    flat = flat.replace("|", "\\|")
    ticks = "`" * (_longest_backtick_run(flat) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def md_block(text: str) -> list[str]:
    """A block of payload text shown as written (a fence), or as an escaped `<pre>` when it
    holds `<`, `>` or `&`, which some renderers would otherwise take for HTML."""
    if _HTML_SPECIAL.search(text):
        escaped = _HTML_SPECIAL.sub(lambda m: _ENTITY[m.group(0)], text)
        return ["<pre>" + escaped + "</pre>"]
    fence = "`" * max(3, _longest_backtick_run(text) + 1)
    return [fence + "text", text, fence]


_ENTITY = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def _longest_backtick_run(text: str) -> int:
    return max((len(run) for run in re.findall(r"`+", text)), default=0)
