"""The history as one self-contained HTML page: inline CSS and SVG, no script, no request.

Sections: the detected changes (regressions first), then per context and cell a trend plot of
every metric and of the top kernels: each run's trials and median, a dashed line at each
change (red: a regression, green: an improvement, grey: a change of a count or of a metric of
unknown direction). The database is named with its password redacted. Everything that came
from runs (names, commands, kernel names) is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from aorta.history.analyse import Analysed
from aorta.history.model import Change, RunInfo
from aorta.history.render_text import mark_text, size_text
from aorta.rendering import PAGE_END, fmt_with_unit, h, html_table, page_open, unit_of
from aorta.rendering.svg import axis_label
from aorta.rendering.trend import TrendMark, TrendRun, trend_plot

_EXTRA_CSS = """
.reg{background:#fde2e1}.imp{background:#dff3e1}
table.changes td:nth-child(6){word-break:break-all;max-width:340px}
figure.trend{margin:6px 0 14px}figure.trend figcaption{font-size:12px;color:#333}
"""
_IMPROVEMENTS = frozenset({"FASTER", "SMALLER"})


def render_html(items: Sequence[Analysed], db: str, settings_text: str,
                failing: Sequence[tuple[Analysed, Change]]) -> str:
    changes = [(a, c) for a in items for c in a.changes]
    changes.sort(key=lambda ac: (not ac[1].regression, ac[0].series.context.id,
                                 ac[0].series.cell, ac[0].series.name))
    runs = {p.run.id for a in items for p in a.series.points}
    contexts = {a.series.context.id: a.series.context for a in items}
    lines = [*page_open("aorta performance history", _EXTRA_CSS),
             "<h1>aorta performance history</h1>",
             f'<p class="lead">{len(runs)} run(s) in {len(contexts)} context(s), '
             f"{len(items)} series, {len(changes)} change(s) detected, "
             f"{sum(c.regression for _, c in changes)} regression(s).</p>",
             f"<p><small>database: {h(db)}; {h(settings_text)}</small></p>"]
    lines += _changes(changes, failing)
    for context_id, context in contexts.items():
        mine = [a for a in items if a.series.context.id == context_id]
        lines += [f'<section id="context-{context_id}"><h2>{h(context.label)}</h2>',
                  f"<p><small>collectors: {h(context.collect)}</small></p>"]
        for cell in dict.fromkeys(a.series.cell for a in mine):
            lines += _cell(cell, [a for a in mine if a.series.cell == cell])
        lines.append("</section>")
    return "\n".join(lines + PAGE_END) + "\n"


def _changes(changes: Sequence[tuple[Analysed, Change]],
             failing: Sequence[tuple[Analysed, Change]]) -> list[str]:
    lines = ['<section id="changes"><h2>Detected changes</h2>']
    if not changes:
        return lines + ['<p class="ok">None: no series has a step larger than the threshold.'
                        "</p>", "</section>"]
    gate = {(id(a), c.position) for a, c in failing}
    rows = []
    for a, c in changes:
        css = ' class="reg"' if c.regression else ' class="imp"' if c.verdict in _IMPROVEMENTS \
            else ""
        rows.append(
            f"<tr{css}><td>{h(c.verdict)}{' (regression)' if c.regression else ''}</td>"
            f"<td>{size_text(c)}</td><td>{_run_text(c.after)}</td><td>{_run_text(c.before)}</td>"
            f"<td>{h(a.series.cell)}</td><td>{h(a.series.name)}</td>"
            f"<td>{h(a.series.context.label)}</td>"
            f"<td>{'FAILS' if (id(a), c.position) in gate else ''}</td></tr>")
    head = ("verdict", "size (interval)", "first run after", "last run before", "cell",
            "series", "context", "gate")
    return lines + html_table(head, rows, " class='changes'") + ["</section>"]


def _run_text(run: RunInfo) -> str:
    return (f"<code>{h(run.label)}</code> <small>{h(run.name)}, "
            f"{h(run.created_at)}<br>{h(' '.join(run.command))}</small>")


def _cell(cell: str, items: Sequence[Analysed]) -> list[str]:
    lines = [f"<h3>cell {h(cell)}</h3>", '<div class="plots">']
    for a in items:
        caption = a.series.name + (" · " + "; ".join(mark_text(c) for c in a.changes)
                                   if a.changes else "")
        lines += ['<figure class="trend">', _plot(a), f"<figcaption>{h(caption)}</figcaption>",
                  "</figure>"]
    return lines + ["</div>"]


def _plot(item: Analysed) -> str:
    """The series' trend: its runs oldest first, a mark at each change."""
    s, unit = item.series, unit_of(item.series.unit_name)
    runs = []
    for p in s.points:
        middle = median(p.values)
        runs.append(TrendRun(p.values, middle, f"{p.run.label} ({p.run.name}, "
                             f"{p.run.created_at}): median {fmt_with_unit(middle, unit)} of "
                             f"{len(p.values)} trial(s)", p.run.label, p.run.created_at))
    marks = [TrendMark(c.position, "#d62728" if c.regression else "#2ca02c"
                       if c.verdict in _IMPROVEMENTS else "#888",
                       f"{c.verdict}{' (regression)' if c.regression else ''}: {size_text(c)} "
                       f"first at {c.after.label} (run {c.after.name}), after {c.before.label}")
             for c in item.changes]
    label = f"{s.name}, cell {s.cell}: {len(s.points)} run(s), {len(item.changes)} change(s)"
    return trend_plot(label, axis_label(s.name, unit), runs, marks)
