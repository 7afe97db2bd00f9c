"""The history as one self-contained HTML page (inline CSS and SVG, no script): the detected
changes, regressions first, then a trend plot per context, cell, metric and top kernel. Run
text is escaped and the database named with its password redacted."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from statistics import median

from aorta.base.redaction import PATTERN_ONLY
from aorta.history.analyse import Analysed, View
from aorta.history.db import resolve_url
from aorta.history.model import Change, RunInfo
from aorta.history.render_text import INCOMPLETE_NOTE, mark_text, size_text
from aorta.rendering import PAGE_END, fmt_with_unit, h, html_table, page_open, unit_of
from aorta.rendering.svg import axis_label
from aorta.rendering.trend import TrendMark, TrendRun, trend_plot
from aorta.store.files import write_anywhere

_EXTRA_CSS = """
.reg{background:#fde2e1}.imp{background:#dff3e1}
table.changes td:nth-child(6){word-break:break-all;max-width:340px}
figure.trend{margin:6px 0 14px}figure.trend figcaption{font-size:12px;color:#333}
"""
_COLOURS = {"reg": "#d62728", "imp": "#2ca02c", "": "#888"}


def default_page(db_url: str | None) -> Path:
    """`history.html` beside an SQLite file, else in the current folder."""
    url = resolve_url(db_url)
    if url.get_backend_name() == "sqlite" and url.database:
        return Path(url.database).parent / "history.html"
    return Path("history.html")


def write_page(view: View, target: Path) -> None:
    """Write the page to `target` (replacing it), credential shapes scrubbed."""
    write_anywhere(target, PATTERN_ONLY.text(render_html(view)))


def render_html(view: View) -> str:
    items = view.items
    changes = sorted(((a, c) for a in items for c in a.changes), key=lambda ac: (
        not ac[1].regression, ac[0].series.context.id, ac[0].series.cell, ac[0].series.name))
    runs = {p.run.id for a in items for p in a.series.points}
    incomplete = {p.run.id for a in items for p in a.series.points if not p.run.complete}
    contexts = {a.series.context.id: a.series.context for a in items}
    settings = (f"method {view.settings.method}, threshold {view.settings.threshold:g}, "
                f"top {view.settings.top or 'all'} kernel(s) per cell")
    lines = [*page_open("aorta performance history", _EXTRA_CSS),
             "<h1>aorta performance history</h1>",
             f'<p class="lead">{len(runs)} run(s) in {len(contexts)} context(s), '
             f"{len(items)} series, {len(changes)} change(s) detected, "
             f"{sum(c.regression for _, c in changes)} regression(s).</p>",
             *([f'<p class="warn">{len(incomplete)} run(s) were not complete, hollow points: '
                f"{h(INCOMPLETE_NOTE)}.</p>"] if incomplete else []),
             f"<p><small>database: {h(view.db)}; {h(settings)}</small></p>"]
    lines += _changes(changes, view.failing)
    for context_id, context in contexts.items():
        mine = [a for a in items if a.series.context.id == context_id]
        lines += [f'<section id="context-{context_id}"><h2>{h(context.label)}</h2>',
                  f"<p><small>collectors: {h(context.collect)}</small></p>"]
        for cell in dict.fromkeys(a.series.cell for a in mine):
            lines += _cell(cell, [a for a in mine if a.series.cell == cell])
        lines.append("</section>")
    return "\n".join(lines + PAGE_END) + "\n"


def _tone(change: Change) -> str:
    return "reg" if change.regression else "imp" if change.verdict in ("FASTER", "SMALLER") else ""


def _verdict(change: Change) -> str:
    return change.verdict + (" (regression)" if change.regression else "")


def _changes(changes: Sequence[tuple[Analysed, Change]],
             failing: Sequence[tuple[Analysed, Change]]) -> list[str]:
    lines = ['<section id="changes"><h2>Detected changes</h2>']
    if not changes:
        return lines + ['<p class="ok">None: no series has a step larger than the threshold.'
                        "</p>", "</section>"]
    gate = {(id(a), c.position) for a, c in failing}
    rows = []
    for a, c in changes:
        css = f' class="{_tone(c)}"' if _tone(c) else ""
        rows.append(
            f"<tr{css}><td>{h(_verdict(c))}</td>"
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
    s, unit = item.series, unit_of(item.series.unit_name)
    runs = []
    for p in s.points:
        middle = median(p.values)
        runs.append(TrendRun(p.values, middle, f"{p.run.label} ({p.run.name}, "
                             f"{p.run.created_at}){p.run.mark}: median "
                             f"{fmt_with_unit(middle, unit)} of {len(p.values)} trial(s)",
                             p.run.label, p.run.created_at, hollow=not p.run.complete))
    marks = [TrendMark(c.position, _COLOURS[_tone(c)],
                       f"{_verdict(c)}: {size_text(c)} first at {c.after.label} "
                       f"(run {c.after.name}), after {c.before.label}")
             for c in item.changes]
    label = f"{s.name}, cell {s.cell}: {len(s.points)} run(s), {len(item.changes)} change(s)"
    return trend_plot(label, axis_label(s.name, unit), runs, marks)
