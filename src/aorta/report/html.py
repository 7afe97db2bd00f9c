"""The report as one self-contained HTML page: inline CSS and SVG, no script, no request. Run
text is escaped (payload output is untrusted); artifact links are relative (`link_base`)."""

from __future__ import annotations

from collections.abc import Sequence

from aorta.rendering import (PAGE_END, fmt, fmt_with_unit, h, href, html_cells, html_table,
                             page_open, spread, unit_of)
from aorta.rendering.svg import Bar, StripRow, bar_chart, cell_colour, strip_plot
from aorta.report.model import Failure, KernelChart, Report
from aorta.report.sections import (ALL_PASSED, CELL_HEAD, NO_FIGURE, NO_KERNELS, OVERHEAD_HEAD,
                                   OVERHEAD_NOTE, PATHS_NOTE, SECTIONS, STATUS_WORDS, TRIAL_HEAD,
                                   capture_text, cell_flags, chart_note, failure_facts, header_rows,
                                   overhead_rows, repeats_text, verdict_counts, wall_median)


def render_html(report: Report, link_base: str = "") -> str:
    """The whole page. `link_base` is the run directory relative to the page (`""` when the
    page sits in the run directory), ending in `/` when not empty."""
    head = report.header
    title = f"aorta report: {head.run}"
    bodies = {"run": _header(report), "warnings": _warnings(report), "cells": _cells(report),
              "metrics": _metrics(report), "overhead": _overhead(report),
              "plots": _plots(report), "kernels": _kernels(report),
              "failures": _failures(report.failures, link_base),
              "trials": _trials(report, link_base), "details": _details(report)}
    nav_words = {"warnings": f"Warnings ({len(report.warnings)})", "overhead": "Overhead",
                 "failures": f"Failures ({len(report.failures)})"}
    nav = [f'<a href="#{key}">{h(nav_words.get(key, heading))}</a>'
           for key, heading in SECTIONS if bodies[key] is not None]
    lines = [*page_open(title),
             f'<h1>{h(title)} <span class="status {h(head.status)}">'
             f"{h(STATUS_WORDS.get(head.status, head.status))}</span></h1>",
             f'<p class="lead">{h(verdict_counts(report))}</p>', f"<nav>{' · '.join(nav)}</nav>"]
    for key, heading in (*SECTIONS, ("details", "Recipe and environment")):
        body = bodies[key]
        if body is not None:
            lines += [f'<section id="{key}"><h2>{heading}</h2>', *body, "</section>"]
    return "\n".join(lines + PAGE_END) + "\n"


def _header(report: Report) -> list[str]:
    lines = _kv_table(header_rows(report.header))
    if report.header.gpus:
        lines.append(f"<h3>GPUs ({h(report.header.gpu_source or '')})</h3>")
        lines += html_table(("index", "name", "driver", "memory"), [
            f"<tr>{html_cells((g.index or '-', g.name, g.driver or '-', g.memory or '-'))}</tr>"
            for g in report.header.gpus])
    return lines


def _warnings(report: Report) -> list[str]:
    if not report.warnings:
        return ['<p class="ok">None: every trial ran, passed its capture checks, and the '
                'environment snapshot is complete.</p>']
    return ['<ul class="warnings">',
            *(f'<li><span class="tag">{h(n.kind)}</span> '
              + (f"<b>{h(n.cell)}</b>: " if n.cell else "") + f"{h(n.message)}</li>"
              for n in report.warnings), "</ul>"]


def _cells(report: Report) -> list[str]:
    rows = []
    for position, cell in enumerate(report.cells):
        flags = cell_flags(cell)
        warn = ' class="warn"' if flags else ""
        rows.append(f'<tr><td><a href="#cell-{position}">{h(cell.name)}</a></td>'
                    f"<td>{cell.planned}</td><td>{cell.passed}</td>{_count(cell.failed, 'bad')}"
                    f"{_count(cell.errored, 'bad')}{_count(cell.missing, 'warn')}"
                    f"<td>{h(wall_median(cell))}</td><td>{h(capture_text(cell))}</td>"
                    f"<td{warn}>{h(', '.join(flags))}</td></tr>")
    return html_table(CELL_HEAD, rows)


def _count(value: int, css: str) -> str:
    return f'<td class="{css}">{value}</td>' if value else "<td>0</td>"


def _kv_table(rows: Sequence[tuple[str, str]], one_line: bool = False) -> list[str]:
    cells = [f"<tr><th>{h(key)}</th><td>{h(value)}</td></tr>" for key, value in rows]
    if one_line:
        return [f'<table class="kv">{"".join(cells)}</table>']
    return ['<table class="kv">', *cells, "</table>"]


def _metrics(report: Report) -> list[str]:
    lines = ["<p>Over passing trials: <b>median</b> [min–max] ±standard deviation (n trials).</p>"]
    if not report.metrics:
        return lines + [f"<p>{NO_FIGURE}</p>"]
    head = "".join(f"<th>{h(c.name)}</th>" for c in report.cells)
    lines.append(f'<div class="scroll"><table class="metrics"><tr><th>metric</th>{head}</tr>')
    for key in report.metrics:
        unit = unit_of(key)
        row = [f"<th>{h(key)}{f' <small>({h(unit)})</small>' if unit else ''}</th>"]
        for cell in report.cells:
            m = cell.metrics.get(key)
            spreads = spread(m.min, m.max, m.std) if m is not None and m.n > 1 else ""
            row.append('<td class="none">-</td>' if m is None else
                       f"<td><b>{h(fmt(m.median))}</b> <small>{h(spreads)} (n={m.n})</small></td>")
        lines.append(f"<tr>{''.join(row)}</tr>")
    return lines + ["</table></div>"]


def _overhead(report: Report) -> list[str] | None:
    rows = overhead_rows(report)
    if not rows:
        return None
    return [f"<p>{OVERHEAD_NOTE}</p>",
            *html_table(OVERHEAD_HEAD, [f"<tr>{html_cells(r[:4])}<td><b>{h(r[4])}</b></td>"
                                        f"{html_cells(r[5:])}</tr>" for r in rows])]


def _plots(report: Report) -> list[str]:
    lines = ["<p>One dot per passing trial (hover for its value); the dark tick is the median, "
             "the grey line the range; hollow dots are baseline trials (no collector), when "
             "the run has them. Axes do not start at zero.</p>", '<div class="plots">']
    for key in report.metrics:
        svg = strip_plot(key, unit_of(key), _strip_rows(report, key))
        if svg:
            lines += [f'<figure id="plot-{h(key)}">', svg, "</figure>"]
    return lines + ["</div>"]


def _kernels(report: Report) -> list[str]:
    lines = ["<p>Median total time per passing trial of the longest entries of each per-kernel "
             "table; a trial whose table does not list an entry counts as 0 ms.</p>"]
    charts = [(p, c, chart) for p, c in enumerate(report.cells) for chart in c.kernels]
    for position, cell, chart in charts:
        lines += [f'<h3 id="kernels-{position}-{h(chart.table)}">{h(cell.name)}: '
                  f"{h(chart.table)} <small>({chart_note(chart)})</small></h3>",
                  bar_chart(f"{chart.table} median per trial", "ms", _kernel_bars(chart))]
    return lines if charts else lines + [f"<p>{NO_KERNELS}</p>"]


def _failures(failures: Sequence[Failure], base: str) -> list[str]:
    if not failures:
        return [f'<p class="ok">{ALL_PASSED}</p>']
    lines: list[str] = []
    shown_cells: set[str] = set()
    for f in failures:
        facts = failure_facts(f)
        lines += [f'<div class="failure"><h3><span class="verdict {h(f.verdict)}">'
                  f"{h(f.verdict)}</span> {h(f.cell)}/{h(f.name)}"
                  + (f" <small>and {h(repeats_text(f))}</small>" if f.repeats else "") + "</h3>",
                  f"<p>{h(f.reason)}{f' ({h(facts)})' if facts else ''}</p>",
                  *(f"<p>{h(c)} capture {h(state)}</p>" for c, state in f.captures.items()),
                  f"<p>{_links(f.files, base)}</p>"]
        stream = "stdout (stderr had no line to read)" if f.stdout_tail else "stderr"
        if f.stdout_tail or f.stderr_tail:
            opened = " open" if f.cell not in shown_cells else ""
            shown_cells.add(f.cell)
            lines.append(f"<details{opened}><summary>end of {stream}</summary>"
                         f"<pre>{h(f.stdout_tail or f.stderr_tail)}</pre></details>")
        else:
            lines.append("<p><small>stderr was empty</small></p>" if f.stderr_tail == ""
                         else "<p><small>no stderr was kept</small></p>")
        lines.append("</div>")
    return lines


def _trials(report: Report, base: str) -> list[str]:
    lines = [f"<p>{PATHS_NOTE}</p>"]
    for position, cell in enumerate(report.cells):
        lines.append(f'<h3 id="cell-{position}">{h(cell.name)}</h3>')
        lines += html_table(TRIAL_HEAD, [
            f'<tr><td><a href="{href(base, t.dir)}">{h(t.name)}</a></td>'
            f'<td><span class="verdict {h(t.verdict)}">{h(t.verdict)}</span></td>'
            f"<td>{h(fmt_with_unit(t.wall_s, 's'))}</td><td>{h(t.reason)}</td>"
            f"<td>{_links(t.files, base)}</td></tr>" for t in cell.trials])
    return lines


def _links(files: dict[str, str], base: str) -> str:
    return " ".join(f'<a href="{href(base, path)}">{h(label)}</a>'
                    for label, path in files.items()) or "-"


def _details(report: Report) -> list[str]:
    head, lines = report.header, []
    if head.recipe_text:
        lines += ["<details><summary>recipe.resolved.yaml</summary>",
                  f"<pre>{h(head.recipe_text)}</pre></details>"]
    if head.env_vars:
        lines += ["<details><summary>environment variables that steer GPU software "
                  "(credentials redacted)</summary>",
                  *_kv_table(list(head.env_vars.items()), one_line=True), "</details>"]
    return lines


def _strip_rows(report: Report, key: str) -> list[StripRow]:
    """A row per cell with the metric; baseline trials (no collector) get a hollow row."""
    return [StripRow(label, [(p.trial, p.value) for p in summary.points], summary.median,
                     cell_colour(position), hollow)
            for position, cell in enumerate(report.cells)
            for summary, label, hollow in (
                (cell.metrics.get(key), cell.name, False),
                (cell.baseline.get(key), f"{cell.name} (baseline)", True))
            if summary is not None]


def _kernel_bars(chart: KernelChart) -> list[Bar]:
    """One bar per kernel, labelled with its name (`bar_chart` shortens it; the tooltip gives
    it whole with the figures)."""
    bars = []
    for bar in chart.bars:
        listed = f"listed in {bar.trials}/{chart.trials} trials" if bar.trials < chart.trials \
            else ""
        calls = f", {fmt(bar.calls)} calls" if bar.calls is not None else ""
        bars.append(Bar(bar.name, bar.median_ms, listed,
                        f"{bar.name}\nmedian {fmt(bar.median_ms)} ms per trial{calls}"
                        f"{'; ' + listed if listed else ''}"))
    return bars
