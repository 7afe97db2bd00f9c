"""The history as one self-contained HTML page: inline CSS and SVG, no script, no request.

Sections: the detected changes (regressions first), then per context and cell a trend plot of
every metric and of the top kernels. The database is named with its password redacted.
Everything that came from runs (names, commands, kernel names) is escaped.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from aorta.history.analyse import Analysed
from aorta.history.model import Change, RunInfo
from aorta.history.svg_trend import trend_plot
from aorta.report.style import CSS

__all__ = ["render_html"]

_EXTRA_CSS = """
.reg{background:#fde2e1}.imp{background:#dff3e1}
table.changes td:nth-child(6){word-break:break-all;max-width:340px}
figure.trend{margin:6px 0 14px}figure.trend figcaption{font-size:12px;color:#333}
"""


def render_html(items: Sequence[Analysed], db: str, settings_text: str,
                failing: Sequence[tuple[Analysed, Change]]) -> str:
    changes = [(a, c) for a in items for c in a.changes]
    changes.sort(key=lambda ac: (not ac[1].regression, ac[0].series.context.id,
                                 ac[0].series.cell, ac[0].series.name))
    runs = {p.run.id for a in items for p in a.series.points}
    contexts = {a.series.context.id: a.series.context for a in items}
    lines = ["<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             "<title>aorta performance history</title>",
             f"<style>{CSS}{_EXTRA_CSS}</style>", "</head>", "<body>",
             "<h1>aorta performance history</h1>",
             f'<p class="lead">{len(runs)} run(s) in {len(contexts)} context(s), '
             f"{len(items)} series, {len(changes)} change(s) detected, "
             f"{sum(c.regression for _, c in changes)} regression(s).</p>",
             f"<p><small>database: {escape(db)}; {escape(settings_text)}</small></p>"]
    lines += _changes(changes, failing)
    for context_id, context in contexts.items():
        mine = [a for a in items if a.series.context.id == context_id]
        lines += [f'<section id="context-{context_id}"><h2>{escape(context.label)}</h2>',
                  f"<p><small>collectors: {escape(context.collect)}</small></p>"]
        for cell in dict.fromkeys(a.series.cell for a in mine):
            lines += _cell(context_id, cell, [a for a in mine if a.series.cell == cell])
        lines.append("</section>")
    lines += ["</body>", "</html>"]
    return "\n".join(lines) + "\n"


def _changes(changes: Sequence[tuple[Analysed, Change]],
             failing: Sequence[tuple[Analysed, Change]]) -> list[str]:
    lines = ['<section id="changes"><h2>Detected changes</h2>']
    if not changes:
        return lines + ['<p class="ok">None: no series has a step larger than the threshold.'
                        "</p>", "</section>"]
    gate = {(id(a), c.position) for a, c in failing}
    lines.append("<table class='changes'><tr><th>verdict</th><th>size (interval)</th><th>first run after</th>"
                 "<th>last run before</th><th>cell</th><th>series</th><th>context</th>"
                 "<th>gate</th></tr>")
    for a, c in changes:
        css = ' class="reg"' if c.regression else ' class="imp"' if c.verdict in (
            "FASTER", "SMALLER") else ""
        lines.append(
            f"<tr{css}><td>{escape(c.verdict)}{' (regression)' if c.regression else ''}</td>"
            f"<td>x{c.ratio:.3f} [{c.low:.3f}, {c.high:.3f}]</td>"
            f"<td>{_run_text(c.after)}</td><td>{_run_text(c.before)}</td>"
            f"<td>{escape(a.series.cell)}</td><td>{escape(a.series.name)}</td>"
            f"<td>{escape(a.series.context.label)}</td>"
            f"<td>{'FAILS' if (id(a), c.position) in gate else ''}</td></tr>")
    return lines + ["</table>", "</section>"]


def _run_text(run: RunInfo) -> str:
    command = " ".join(run.command)
    return (f"<code>{escape(run.label)}</code> <small>{escape(run.name)}, "
            f"{escape(run.created_at)}<br>{escape(command)}</small>")


def _cell(context_id: int, cell: str, items: Sequence[Analysed]) -> list[str]:
    lines = [f"<h3>cell {escape(cell)}</h3>", '<div class="plots">']
    for a in items:
        caption = a.series.name
        if a.changes:
            caption += " · " + "; ".join(f"{c.verdict} x{c.ratio:.2f} at {c.after.label}"
                                         for c in a.changes)
        lines += ['<figure class="trend">', trend_plot(a.series, a.changes),
                  f"<figcaption>{escape(caption)}</figcaption>", "</figure>"]
    return lines + ["</div>"]
