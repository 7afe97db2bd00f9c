"""The history as one self-contained HTML page (inline CSS and SVG, no script): for each
context and cell a grid of small trend plots (metrics, then top kernels) over the newest runs,
steps marked, then one table of the steps, each run they name described once below it. Run
text is escaped and the database named with its password redacted."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from statistics import median

from aorta.base.redaction import PATTERN_ONLY
from aorta.history.analyse import Analysed, View
from aorta.history.db import resolve_url
from aorta.history.model import Change, RunInfo
from aorta.history.render_text import (INCOMPLETE_NOTE, first_shown, mark_text, range_text,
                                       size_text)
from aorta.history.store import MIN_KERNEL_RUNS
from aorta.rendering import PAGE_END, fmt_with_unit, h, html_table, page_open, unit_of
from aorta.rendering.short_names import short_name
from aorta.rendering.svg import axis_label
from aorta.rendering.trend import TrendMark, TrendRun, trend_plot
from aorta.store.files import write_anywhere

_EXTRA_CSS = """
.reg{background:#fde2e1}.imp{background:#dff3e1}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(370px,1fr));gap:4px 14px}
.grid figure{margin:4px 0}.grid figcaption{font-size:12px;color:#333;overflow-wrap:anywhere}
table.steps td{white-space:nowrap}table.steps td.name{white-space:normal;overflow-wrap:break-word;
 max-width:420px;font-family:ui-monospace,monospace;font-size:12px}
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
    items, count, runs = view.items, view.settings.runs, view.runs
    changes = sorted(((a, c) for a in items for c in a.changes), key=lambda ac: (
        not ac[1].regression, ac[0].series.context.id, ac[0].series.cell, ac[0].series.name))
    incomplete = {p.run.id for a in items for p in a.series.points if not p.run.complete}
    settings = (f"method bic, threshold {view.settings.threshold:g}, "
                f"top {view.settings.top or 'all'} kernel(s) per cell")
    lines = [*page_open("aorta performance history", _EXTRA_CSS),
             "<h1>aorta performance history</h1>",
             f'<p class="lead">{sum(map(len, runs.values())):,} run(s) in {len(runs)} '
             f"context(s), {len(items)} series, <a href=\"#steps\">{len(changes)} step(s)</a> "
             f"detected, {sum(c.regression for _, c in changes)} regression(s). Each plot shows "
             f"the newest {f'{count:,}' if count else 'all'} runs of its context; steps are "
             f"found as without this limit.</p>",
             *([f'<p class="warn">{len(incomplete)} run(s) were not complete, hollow points: '
                f"{h(INCOMPLETE_NOTE)}.</p>"] if incomplete else []),
             *([f"<p>{view.few_kernels} kernel series not plotted: each ran in fewer than "
                f"{MIN_KERNEL_RUNS} of the runs shown (or, where fewer are shown, not in all of "
                f"them).</p>"] if view.few_kernels else []),
             f"<p><small>database: {h(view.db)}; {h(settings)}</small></p>"]
    for context_id in dict.fromkeys(a.series.context.id for a in items):
        mine = [a for a in items if a.series.context.id == context_id]
        context = mine[0].series.context
        lines += [f'<section id="context-{context_id}"><h2>{h(context.label)}</h2>',
                  f"<p><small>{h(range_text(runs[context_id], count))}; collectors: "
                  f"{h(context.collect)}</small></p>"]
        for cell in dict.fromkeys(a.series.cell for a in mine):
            lines += [f"<h3>cell {h(cell)}</h3>", '<div class="grid">']
            for a in (a for a in mine if a.series.cell == cell):
                lines += _figure(a, first_shown(a.series, runs, count))
            lines.append("</div>")
        lines.append("</section>")
    lines += _steps(changes, view.failing, len(runs) > 1)
    return "\n".join(lines + PAGE_END) + "\n"


def _breakable(name: str) -> str:
    """`name` escaped, shortened past 120 characters, free to wrap after `/`,
    `:` and `,` and before `(` rather than inside a word."""
    return re.sub(r"([/:,])(?!/|:)|(?=\()", r"\1<wbr>", h(short_name(name, 120)))


def _tone(change: Change) -> str:
    return "reg" if change.regression else "imp" if change.verdict in ("FASTER", "SMALLER") else ""


def _verdict(change: Change) -> str:
    return change.verdict + (" (regression)" if change.regression else "")


def _figure(item: Analysed, first: int) -> list[str]:
    marks = "; ".join(mark_text(c) + ("" if c.position >= first else " (before the runs shown)")
                      for c in item.changes)
    return ['<figure>', _plot(item, first),
            *([f"<figcaption>{h(marks)}</figcaption>"] if marks else []), "</figure>"]


def _plot(item: Analysed, first: int) -> str:
    s, unit = item.series, unit_of(item.series.unit_name)
    runs = []
    for p in s.points[first:]:
        middle = median(p.values)
        commit = p.run.commit_sha[:8] + ("+" if p.run.commit_dirty else "") \
            if p.run.commit_sha else p.run.created_at[:10]
        runs.append(TrendRun(p.values, middle, f"{p.run.label} ({p.run.name}, "
                             f"{p.run.created_at}){p.run.mark}: median "
                             f"{fmt_with_unit(middle, unit)} of {len(p.values)} trial(s)",
                             commit, p.run.created_at[5:16].replace("T", " "),
                             hollow=not p.run.complete))
    marks = [TrendMark(c.position - first, _COLOURS[_tone(c)],
                       f"{_verdict(c)}: {size_text(c)} first at {c.after.label} "
                       f"(run {c.after.name}), after {c.before.label}")
             for c in item.changes if c.position >= first]
    label = f"{s.name}, cell {s.cell}: {len(runs)} run(s), {len(item.changes)} step(s)"
    return trend_plot(label, axis_label(s.name, unit), runs, marks)


def _steps(changes: Sequence[tuple[Analysed, Change]],
           failing: Sequence[tuple[Analysed, Change]], contexts: bool) -> list[str]:
    lines = ['<section id="steps"><h2>Steps</h2>']
    if not changes:
        return lines + ['<p class="ok">None: no series has a step larger than the threshold.'
                        "</p>", "</section>"]
    gate = {(id(a), c.position) for a, c in failing}
    named: dict[int, RunInfo] = {}
    rows = []
    for a, c in changes:
        named.update({c.before.id: c.before, c.after.id: c.after})
        css = f' class="{_tone(c)}"' if _tone(c) else ""
        rows.append(
            f"<tr{css}><td>{h(_verdict(c))}</td><td>{size_text(c)}</td>"
            f"<td>{h(a.series.cell)}</td>"
            f'<td class="name" title="{h(a.series.name)}">{_breakable(a.series.name)}</td>'
            f'<td><a href="#run-{c.after.id}">{h(c.after.label)}</a> '
            f"<small>{h(c.after.created_at[:10])}</small></td>"
            f'<td><a href="#run-{c.before.id}">{h(c.before.label)}</a></td>'
            + (f"<td>{h(a.series.context.label)}</td>" if contexts else "")
            + f"<td>{'FAILS' if (id(a), c.position) in gate else ''}</td></tr>")
    head = ("verdict", "size (interval)", "cell", "series", "first run after",
            "last run before", *(("context",) if contexts else ()), "gate")
    described = [f'<li id="run-{r.id}"><code>{h(r.label)}</code> run {h(r.name)}{h(r.mark)}, '
                 f"{h(r.created_at)}: <code>{h(' '.join(r.command))}</code></li>"
                 for r in sorted(named.values(), key=lambda r: (r.created_at, r.id))]
    return lines + html_table(head, rows, " class='steps'") + [
        "<h3>The runs around the steps</h3>", "<ul>", *described, "</ul>", "</section>"]
