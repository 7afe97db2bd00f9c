"""The report as one self-contained HTML page: inline CSS, inline SVG, no script, no request.

Everything that came from the run (names, reasons, the payload's stderr) is escaped: payload
output is untrusted. Links to artifacts are relative, so the page works wherever the run
directory is copied, and `link_base` points them at the run directory from where the page is.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from urllib.parse import quote

from aorta.report.model import Failure, KernelChart, Report, TrialRef
from aorta.report.numbers import fmt, fmt_with_unit, unit_of
from aorta.report.sections import (STATUS_WORDS, capture_text, cell_flags, failure_facts,
                                   header_rows, overhead_text, repeats_text, verdict_counts)
from aorta.report.style import CSS
from aorta.report.svg import Bar, StripRow, bar_chart, cell_colour, strip_plot

__all__ = ["html_lines", "render_html"]


def render_html(report: Report, link_base: str = "") -> str:
    return "\n".join(html_lines(report, link_base)) + "\n"


def html_lines(report: Report, link_base: str = "") -> list[str]:
    """The whole page, line by line. `link_base` is the run directory relative to the page
    (`""` when the page sits in the run directory), ending in `/` when not empty."""
    h = report.header
    title = f"aorta report: {h.run}"
    lines = ["<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{escape(title)}</title>", f"<style>{CSS}</style>", "</head>", "<body>",
             f"<h1>{escape(title)} <span class=\"status {escape(h.status)}\">"
             f"{escape(STATUS_WORDS.get(h.status, h.status))}</span></h1>",
             f'<p class="lead">{escape(verdict_counts(report))}</p>']
    lines += _nav(report)
    lines += _header(report)
    lines += _warnings(report)
    lines += _cells(report)
    lines += _metrics(report)
    lines += _overhead(report)
    lines += _plots(report)
    lines += _kernels(report)
    lines += _failures(report.failures, link_base)
    lines += _trials(report, link_base)
    lines += _details(report)
    lines += ["</body>", "</html>"]
    return lines


def _nav(report: Report) -> list[str]:
    overhead = [("overhead", "Overhead")] if any(c.overhead for c in report.cells) else []
    targets = [("run", "Run"), ("warnings", f"Warnings ({len(report.warnings)})"),
               ("cells", "Cells"), ("metrics", "Metrics"), *overhead, ("plots", "Distributions"),
               ("kernels", "Top kernels"), ("failures", f"Failures ({len(report.failures)})"),
               ("trials", "Trials and artifacts")]
    links = " · ".join(f'<a href="#{t}">{escape(label)}</a>' for t, label in targets)
    return [f"<nav>{links}</nav>"]


def _header(report: Report) -> list[str]:
    lines = ['<section id="run"><h2>Run</h2>', '<table class="kv">']
    for key, value in header_rows(report.header):
        lines.append(f"<tr><th>{escape(key)}</th><td>{escape(value)}</td></tr>")
    lines.append("</table>")
    gpus = report.header.gpus
    if gpus:
        lines += [f"<h3>GPUs ({escape(report.header.gpu_source or '')})</h3>",
                  "<table><tr><th>index</th><th>name</th><th>driver</th><th>memory</th></tr>"]
        lines += [f"<tr><td>{escape(g.index or '-')}</td><td>{escape(g.name)}</td>"
                  f"<td>{escape(g.driver or '-')}</td><td>{escape(g.memory or '-')}</td></tr>"
                  for g in gpus]
        lines.append("</table>")
    lines.append("</section>")
    return lines


def _warnings(report: Report) -> list[str]:
    lines = ['<section id="warnings"><h2>Warnings</h2>']
    if not report.warnings:
        return lines + ['<p class="ok">None: every trial ran, passed its capture checks, and '
                        'the environment snapshot is complete.</p>', "</section>"]
    lines.append('<ul class="warnings">')
    for notice in report.warnings:
        where = f"<b>{escape(notice.cell)}</b>: " if notice.cell else ""
        lines.append(f'<li><span class="tag">{escape(notice.kind)}</span> {where}'
                     f"{escape(notice.message)}</li>")
    return lines + ["</ul>", "</section>"]


def _cells(report: Report) -> list[str]:
    lines = ['<section id="cells"><h2>Cells</h2>',
             "<table><tr><th>cell</th><th>trials</th><th>pass</th><th>fail</th><th>error</th>"
             "<th>missing</th><th>wall median</th><th>captures</th><th>flags</th></tr>"]
    warn = ' class="warn"'
    for position, cell in enumerate(report.cells):
        wall = cell.metrics.get("wall_s")
        flags = cell_flags(cell)
        lines.append(
            f'<tr><td><a href="#cell-{position}">{escape(cell.name)}</a></td>'
            f"<td>{cell.planned}</td><td>{cell.passed}</td>{_count(cell.failed, 'bad')}"
            f"{_count(cell.errored, 'bad')}{_count(cell.missing, 'warn')}"
            f"<td>{escape(fmt_with_unit(wall.median, 's') if wall else '-')}</td>"
            f"<td>{escape(capture_text(cell))}</td>"
            f"<td{warn if flags else ''}>{escape(', '.join(flags))}</td></tr>")
    return lines + ["</table>", "</section>"]


def _count(value: int, css: str) -> str:
    return f'<td class="{css}">{value}</td>' if value else "<td>0</td>"


def _metrics(report: Report) -> list[str]:
    lines = ['<section id="metrics"><h2>Metrics</h2>',
             "<p>Over passing trials: <b>median</b> [min–max] ±standard deviation (n trials)."
             "</p>"]
    if not report.metrics:
        return lines + ["<p>No trial passed, so there is no figure to show.</p>", "</section>"]
    head = "".join(f"<th>{escape(c.name)}</th>" for c in report.cells)
    lines.append(f'<div class="scroll"><table class="metrics"><tr><th>metric</th>{head}</tr>')
    for key in report.metrics:
        unit = unit_of(key)
        row = [f"<th>{escape(key)}{f' <small>({escape(unit)})</small>' if unit else ''}</th>"]
        for cell in report.cells:
            m = cell.metrics.get(key)
            if m is None:
                row.append('<td class="none">-</td>')
                continue
            spread = f"[{fmt(m.min)}–{fmt(m.max)}] ±{fmt(m.std)}" if m.n > 1 else ""
            row.append(f"<td><b>{escape(fmt(m.median))}</b> <small>{escape(spread)} "
                       f"(n={m.n})</small></td>")
        lines.append(f"<tr>{''.join(row)}</tr>")
    return lines + ["</table></div>", "</section>"]


def _overhead(report: Report) -> list[str]:
    rows = [(c, o) for c in report.cells for o in c.overhead.values()]
    if not rows:
        return []
    lines = ['<section id="overhead"><h2>Collector overhead</h2>',
             "<p>Median over profiled trials divided by the median over baseline trials (the "
             "same command with no collector, interleaved).</p>",
             "<table><tr><th>cell</th><th>metric</th><th>profiled median</th>"
             "<th>baseline median</th><th>ratio</th><th>interval</th><th>n profiled / "
             "baseline</th></tr>"]
    for cell, o in rows:
        unit = unit_of(o.metric)
        profiled, base = cell.metrics.get(o.metric), cell.baseline.get(o.metric)
        ratio, interval = overhead_text(o)
        lines.append(
            f"<tr><td>{escape(cell.name)}</td><td>{escape(o.metric)}</td>"
            f"<td>{escape(fmt_with_unit(profiled.median if profiled else None, unit))}</td>"
            f"<td>{escape(fmt_with_unit(base.median if base else None, unit))}</td>"
            f"<td><b>{escape(ratio)}</b></td><td>{escape(interval)}</td>"
            f"<td>{o.n_profiled} / {o.n_baseline}</td></tr>")
    return lines + ["</table>", "</section>"]


def _plots(report: Report) -> list[str]:
    lines = ['<section id="plots"><h2>Distributions</h2>',
             "<p>One dot per passing trial (hover for its value); the dark tick is the median, "
             "the grey line the range; hollow dots are baseline trials (no collector), when "
             "the run has them. Axes do not start at zero.</p>"]
    lines.append('<div class="plots">')
    for key in report.metrics:
        svg = strip_plot(key, unit_of(key), strip_rows(report, key))
        if svg:
            lines += [f'<figure id="plot-{escape(key)}">', svg, "</figure>"]
    return lines + ["</div>", "</section>"]


def _kernels(report: Report) -> list[str]:
    lines = ['<section id="kernels"><h2>Top kernels</h2>',
             "<p>Median total time per passing trial of the longest entries of each per-kernel "
             "table; a trial whose table does not list an entry counts as 0 ms.</p>"]
    any_chart = False
    for position, cell in enumerate(report.cells):
        for chart in cell.kernels:
            any_chart = True
            lines.append(f'<h3 id="kernels-{position}-{escape(chart.table)}">{escape(cell.name)}: '
                         f"{escape(chart.table)} <small>(top {len(chart.bars)} of "
                         f"{chart.listed}, {chart.trials} passing trial(s))</small></h3>")
            lines.append(bar_chart(f"{chart.table} median per trial", "ms",
                                   kernel_bars(chart)))
    if not any_chart:
        lines.append("<p>No collector in this run published a per-kernel table.</p>")
    return lines + ["</section>"]


def _failures(failures: Sequence[Failure], base: str) -> list[str]:
    lines = ['<section id="failures"><h2>Failures</h2>']
    if not failures:
        return lines + ['<p class="ok">Every trial that ran passed.</p>', "</section>"]
    shown_cells: set[str] = set()
    for f in failures:
        facts = failure_facts(f)
        lines += [f'<div class="failure"><h3><span class="verdict {escape(f.verdict)}">'
                  f"{escape(f.verdict)}</span> {escape(f.cell)}/{escape(f.name)}"
                  + (f" <small>and {escape(repeats_text(f))}</small>" if f.repeats else "")
                  + "</h3>",
                  f"<p>{escape(f.reason)}{f' ({escape(facts)})' if facts else ''}</p>"]
        lines += [f"<p>{escape(c)} capture {escape(state)}</p>" for c, state in f.captures.items()]
        lines.append(f"<p>{_links(f.files, base)}</p>")
        if f.stderr_tail:
            opened = " open" if f.cell not in shown_cells else ""
            shown_cells.add(f.cell)
            lines.append(f"<details{opened}><summary>end of stderr</summary>"
                         f"<pre>{escape(f.stderr_tail)}</pre></details>")
        else:
            lines.append("<p><small>stderr was empty</small></p>" if f.stderr_tail == ""
                         else "<p><small>no stderr was kept</small></p>")
        lines.append("</div>")
    return lines + ["</section>"]


def _trials(report: Report, base: str) -> list[str]:
    lines = ['<section id="trials"><h2>Trials and artifacts</h2>',
             "<p>Paths are relative to the run directory.</p>"]
    for position, cell in enumerate(report.cells):
        lines += [f'<h3 id="cell-{position}">{escape(cell.name)}</h3>',
                  "<table><tr><th>trial</th><th>verdict</th><th>wall</th><th>reason</th>"
                  "<th>artifacts</th></tr>"]
        lines += [_trial_row(t, base) for t in cell.trials]
        lines.append("</table>")
    return lines + ["</section>"]


def _trial_row(t: TrialRef, base: str) -> str:
    return (f'<tr><td><a href="{_href(base, t.dir)}">{escape(t.name)}</a></td>'
            f'<td><span class="verdict {escape(t.verdict)}">{escape(t.verdict)}</span></td>'
            f"<td>{escape(fmt_with_unit(t.wall_s, 's'))}</td><td>{escape(t.reason)}</td>"
            f"<td>{_links(t.files, base)}</td></tr>")


def _links(files: dict[str, str], base: str) -> str:
    return " ".join(f'<a href="{_href(base, path)}">{escape(label)}</a>'
                    for label, path in files.items()) or "-"


def _href(base: str, path: str) -> str:
    return escape(quote(base + path, safe="/"), quote=True)


def _details(report: Report) -> list[str]:
    h = report.header
    lines = ['<section id="details"><h2>Recipe and environment</h2>']
    if h.recipe_text:
        lines += ["<details><summary>recipe.resolved.yaml</summary>",
                  f"<pre>{escape(h.recipe_text)}</pre></details>"]
    if h.env_vars:
        rows = "".join(f"<tr><th>{escape(k)}</th><td>{escape(v)}</td></tr>"
                       for k, v in h.env_vars.items())
        lines += ["<details><summary>environment variables that steer GPU software "
                  "(credentials redacted)</summary>", f'<table class="kv">{rows}</table>',
                  "</details>"]
    return lines + ["</section>"]


def strip_rows(report: Report, key: str) -> list[StripRow]:
    """A row per cell with the metric; baseline trials (no collector) get a hollow row."""
    rows = []
    for position, cell in enumerate(report.cells):
        for summary, label, hollow in ((cell.metrics.get(key), cell.name, False),
                                       (cell.baseline.get(key), f"{cell.name} (baseline)", True)):
            if summary is not None:
                rows.append(StripRow(label, [(p.trial, p.value) for p in summary.points],
                                     summary.median, cell_colour(position), hollow))
    return rows


def kernel_bars(chart: KernelChart) -> list[Bar]:
    """One bar per kernel: a readable short name as the label (templated C++ names run to
    hundreds of characters), the full name in the tooltip."""
    from aorta.comparison.display import short_names

    short = short_names([bar.name for bar in chart.bars], 62)
    bars = []
    for bar in chart.bars:
        listed = f"listed in {bar.trials}/{chart.trials} trials" if bar.trials < chart.trials \
            else ""
        calls = f", {fmt(bar.calls)} calls" if bar.calls is not None else ""
        bars.append(Bar(short[bar.name], bar.median_ms, listed,
                        f"{bar.name}\nmedian {fmt(bar.median_ms)} ms per trial{calls}"
                        f"{'; ' + listed if listed else ''}"))
    return bars
