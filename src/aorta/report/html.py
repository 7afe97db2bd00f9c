"""The report as one self-contained HTML page: inline CSS, inline SVG, no script, no request.

Everything that came from the run (names, reasons, the payload's stderr) is escaped: payload
output is untrusted. Links to artifacts are relative, so the page works wherever the run
directory is copied, and `link_base` points them at the run directory from where the page is.
"""

from __future__ import annotations

from collections.abc import Sequence

from aorta.rendering import (PAGE_END, fmt, fmt_with_unit, h, href, html_table, page_open,
                             short_names, spread, unit_of)
from aorta.rendering.svg import Bar, StripRow, bar_chart, cell_colour, strip_plot
from aorta.report.model import Failure, KernelChart, Report, TrialRef
from aorta.report.sections import (STATUS_WORDS, capture_text, cell_flags, failure_facts,
                                   header_rows, overhead_rows, repeats_text, verdict_counts)


def render_html(report: Report, link_base: str = "") -> str:
    return "\n".join(html_lines(report, link_base)) + "\n"


def html_lines(report: Report, link_base: str = "") -> list[str]:
    """The whole page, line by line. `link_base` is the run directory relative to the page
    (`""` when the page sits in the run directory), ending in `/` when not empty."""
    head = report.header
    title = f"aorta report: {head.run}"
    lines = [*page_open(title),
             f'<h1>{h(title)} <span class="status {h(head.status)}">'
             f"{h(STATUS_WORDS.get(head.status, head.status))}</span></h1>",
             f'<p class="lead">{h(verdict_counts(report))}</p>']
    for section in (_nav, _header, _warnings, _cells, _metrics, _overhead, _plots, _kernels):
        lines += section(report)
    lines += _failures(report.failures, link_base) + _trials(report, link_base)
    return lines + _details(report) + PAGE_END


def _nav(report: Report) -> list[str]:
    overhead = [("overhead", "Overhead")] if any(c.overhead for c in report.cells) else []
    targets = [("run", "Run"), ("warnings", f"Warnings ({len(report.warnings)})"),
               ("cells", "Cells"), ("metrics", "Metrics"), *overhead, ("plots", "Distributions"),
               ("kernels", "Top kernels"), ("failures", f"Failures ({len(report.failures)})"),
               ("trials", "Trials and artifacts")]
    return ["<nav>" + " · ".join(f'<a href="#{t}">{h(label)}</a>' for t, label in targets)
            + "</nav>"]


def _header(report: Report) -> list[str]:
    lines = ['<section id="run"><h2>Run</h2>', '<table class="kv">',
             *(f"<tr><th>{h(key)}</th><td>{h(value)}</td></tr>"
               for key, value in header_rows(report.header)), "</table>"]
    if report.header.gpus:
        lines.append(f"<h3>GPUs ({h(report.header.gpu_source or '')})</h3>")
        lines += html_table(("index", "name", "driver", "memory"), [
            _row(g.index or "-", g.name, g.driver or "-", g.memory or "-")
            for g in report.header.gpus])
    return lines + ["</section>"]


def _warnings(report: Report) -> list[str]:
    lines = ['<section id="warnings"><h2>Warnings</h2>']
    if not report.warnings:
        return lines + ['<p class="ok">None: every trial ran, passed its capture checks, and '
                        'the environment snapshot is complete.</p>', "</section>"]
    lines.append('<ul class="warnings">')
    lines += [f'<li><span class="tag">{h(n.kind)}</span> '
              + (f"<b>{h(n.cell)}</b>: " if n.cell else "") + f"{h(n.message)}</li>"
              for n in report.warnings]
    return lines + ["</ul>", "</section>"]


def _cells(report: Report) -> list[str]:
    rows = []
    for position, cell in enumerate(report.cells):
        wall, flags = cell.metrics.get("wall_s"), cell_flags(cell)
        warn = ' class="warn"' if flags else ""
        rows.append(
            f'<tr><td><a href="#cell-{position}">{h(cell.name)}</a></td>'
            f"<td>{cell.planned}</td><td>{cell.passed}</td>{_count(cell.failed, 'bad')}"
            f"{_count(cell.errored, 'bad')}{_count(cell.missing, 'warn')}"
            f"<td>{h(fmt_with_unit(wall.median, 's') if wall else '-')}</td>"
            f"<td>{h(capture_text(cell))}</td>"
            f"<td{warn}>{h(', '.join(flags))}</td></tr>")
    head = ("cell", "trials", "pass", "fail", "error", "missing", "wall median", "captures",
            "flags")
    return ['<section id="cells"><h2>Cells</h2>', *html_table(head, rows), "</section>"]


def _count(value: int, css: str) -> str:
    return f'<td class="{css}">{value}</td>' if value else "<td>0</td>"


def _row(*cells: str) -> str:
    return f"<tr>{_tds(cells)}</tr>"


def _tds(cells: Sequence[str]) -> str:
    return "".join(f"<td>{h(c)}</td>" for c in cells)


def _metrics(report: Report) -> list[str]:
    lines = ['<section id="metrics"><h2>Metrics</h2>',
             "<p>Over passing trials: <b>median</b> [min–max] ±standard deviation (n trials)."
             "</p>"]
    if not report.metrics:
        return lines + ["<p>No trial passed, so there is no figure to show.</p>", "</section>"]
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
    return lines + ["</table></div>", "</section>"]


def _overhead(report: Report) -> list[str]:
    rows = overhead_rows(report)
    if not rows:
        return []
    head = ("cell", "metric", "profiled median", "baseline median", "ratio", "interval",
            "n profiled / baseline")
    return ['<section id="overhead"><h2>Collector overhead</h2>',
            "<p>Median over profiled trials divided by the median over baseline trials (the "
            "same command with no collector, interleaved).</p>",
            *html_table(head, [f"<tr>{_tds(r[:4])}<td><b>{h(r[4])}</b></td>{_tds(r[5:])}</tr>"
                               for r in rows]),
            "</section>"]


def _plots(report: Report) -> list[str]:
    lines = ['<section id="plots"><h2>Distributions</h2>',
             "<p>One dot per passing trial (hover for its value); the dark tick is the median, "
             "the grey line the range; hollow dots are baseline trials (no collector), when "
             "the run has them. Axes do not start at zero.</p>", '<div class="plots">']
    for key in report.metrics:
        svg = strip_plot(key, unit_of(key), strip_rows(report, key))
        if svg:
            lines += [f'<figure id="plot-{h(key)}">', svg, "</figure>"]
    return lines + ["</div>", "</section>"]


def _kernels(report: Report) -> list[str]:
    lines = ['<section id="kernels"><h2>Top kernels</h2>',
             "<p>Median total time per passing trial of the longest entries of each per-kernel "
             "table; a trial whose table does not list an entry counts as 0 ms.</p>"]
    charts = [(p, c, chart) for p, c in enumerate(report.cells) for chart in c.kernels]
    for position, cell, chart in charts:
        lines += [f'<h3 id="kernels-{position}-{h(chart.table)}">{h(cell.name)}: '
                  f"{h(chart.table)} <small>(top {len(chart.bars)} of {chart.listed}, "
                  f"{chart.trials} passing trial(s))</small></h3>",
                  bar_chart(f"{chart.table} median per trial", "ms", kernel_bars(chart))]
    if not charts:
        lines.append("<p>No collector in this run published a per-kernel table.</p>")
    return lines + ["</section>"]


def _failures(failures: Sequence[Failure], base: str) -> list[str]:
    lines = ['<section id="failures"><h2>Failures</h2>']
    if not failures:
        return lines + ['<p class="ok">Every trial that ran passed.</p>', "</section>"]
    shown_cells: set[str] = set()
    for f in failures:
        facts = failure_facts(f)
        lines += [f'<div class="failure"><h3><span class="verdict {h(f.verdict)}">'
                  f"{h(f.verdict)}</span> {h(f.cell)}/{h(f.name)}"
                  + (f" <small>and {h(repeats_text(f))}</small>" if f.repeats else "") + "</h3>",
                  f"<p>{h(f.reason)}{f' ({h(facts)})' if facts else ''}</p>",
                  *(f"<p>{h(c)} capture {h(state)}</p>" for c, state in f.captures.items()),
                  f"<p>{_links(f.files, base)}</p>"]
        if f.stderr_tail:
            opened = " open" if f.cell not in shown_cells else ""
            shown_cells.add(f.cell)
            lines.append(f"<details{opened}><summary>end of stderr</summary>"
                         f"<pre>{h(f.stderr_tail)}</pre></details>")
        else:
            lines.append("<p><small>stderr was empty</small></p>" if f.stderr_tail == ""
                         else "<p><small>no stderr was kept</small></p>")
        lines.append("</div>")
    return lines + ["</section>"]


def _trials(report: Report, base: str) -> list[str]:
    lines = ['<section id="trials"><h2>Trials and artifacts</h2>',
             "<p>Paths are relative to the run directory.</p>"]
    for position, cell in enumerate(report.cells):
        lines.append(f'<h3 id="cell-{position}">{h(cell.name)}</h3>')
        lines += html_table(("trial", "verdict", "wall", "reason", "artifacts"),
                            [_trial_row(t, base) for t in cell.trials])
    return lines + ["</section>"]


def _trial_row(t: TrialRef, base: str) -> str:
    return (f'<tr><td><a href="{href(base, t.dir)}">{h(t.name)}</a></td>'
            f'<td><span class="verdict {h(t.verdict)}">{h(t.verdict)}</span></td>'
            f"<td>{h(fmt_with_unit(t.wall_s, 's'))}</td><td>{h(t.reason)}</td>"
            f"<td>{_links(t.files, base)}</td></tr>")


def _links(files: dict[str, str], base: str) -> str:
    return " ".join(f'<a href="{href(base, path)}">{h(label)}</a>'
                    for label, path in files.items()) or "-"


def _details(report: Report) -> list[str]:
    head = report.header
    lines = ['<section id="details"><h2>Recipe and environment</h2>']
    if head.recipe_text:
        lines += ["<details><summary>recipe.resolved.yaml</summary>",
                  f"<pre>{h(head.recipe_text)}</pre></details>"]
    if head.env_vars:
        rows = "".join(f"<tr><th>{h(k)}</th><td>{h(v)}</td></tr>"
                       for k, v in head.env_vars.items())
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
