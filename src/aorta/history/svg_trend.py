"""A hand-written inline SVG trend plot: runs along x (oldest left), the metric along y.

Each run shows its trials as small dots and its median as a point on a line; a dashed vertical
line marks each detected change (red: a regression, green: an improvement, grey: a change of
a count or of a metric of unknown direction), with the change's size in its `<title>`, which a
browser shows on hover. No script, no font or file fetched; all text is escaped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from html import escape
from statistics import median

from aorta.history.model import Change, Series
from aorta.report.numbers import fmt_with_unit, unit_of
from aorta.report.svg import nice_ticks, tick_labels

__all__ = ["trend_plot", "WIDTH", "HEIGHT"]

WIDTH, HEIGHT = 560, 210
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 12, 46
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:11px"
_IMPROVEMENTS = frozenset({"FASTER", "SMALLER"})


def trend_plot(series: Series, changes: Sequence[Change]) -> str:
    """The plot's markup; an empty string for a series without points."""
    if not series.points:
        return ""
    unit = unit_of(series.unit_name)
    values = [v for p in series.points for v in p.values]
    ticks = nice_ticks(min(values), max(values), 4)
    count = len(series.points)
    span_x = WIDTH - _LEFT - _RIGHT
    low, high = ticks[0], ticks[-1]

    def x(position: int) -> float:
        return _LEFT + (span_x * (position + 0.5) / count)

    def y(value: float) -> float:
        return _TOP + (HEIGHT - _TOP - _BOTTOM) * (1 - (value - low) / ((high - low) or 1.0))

    label = f"{series.name}, cell {series.cell}: {count} run(s), {len(changes)} change(s)"
    parts = [f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
             f'role="img" aria-label="{escape(label)}" class="chart trend">']
    parts += _axes(ticks, y, series, unit)
    parts += [_change_mark(c, x(c.position) - span_x / count / 2, series, unit)
              for c in changes]
    medians = [median(p.values) for p in series.points]
    path = " ".join(f"{'M' if i == 0 else 'L'}{x(i):.1f},{y(m):.1f}"
                    for i, m in enumerate(medians))
    parts.append(f'<path d="{path}" fill="none" stroke="#4c78a8" stroke-width="1.5"/>')
    for i, point in enumerate(series.points):
        parts += [f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="2" fill="#9ab">'
                  f'</circle>' for v in point.values]
        tip = (f"{point.run.label} ({point.run.name}, {point.run.created_at}): median "
               f"{fmt_with_unit(medians[i], unit)} of {len(point.values)} trial(s)")
        parts.append(f'<circle cx="{x(i):.1f}" cy="{y(medians[i]):.1f}" r="3.5" '
                     f'fill="#1f5fa8"><title>{escape(tip)}</title></circle>')
    parts += _x_labels(series, changes, x)
    parts.append("</svg>")
    return "\n".join(parts)


def _axes(ticks: Sequence[float], y: Callable[[float], float], series: Series,
          unit: str) -> list[str]:
    parts = []
    for tick, text in zip(ticks, tick_labels(ticks)):
        parts += [f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y(tick):.1f}" '
                  f'y2="{y(tick):.1f}" stroke="#eee"/>',
                  f'<text x="{_LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" '
                  f'style="{_FONT}" fill="#444">{escape(text)}</text>']
    title = series.name + (f" ({unit})" if unit else "")
    parts.append(f'<text x="{_LEFT}" y="{HEIGHT - 4}" style="{_FONT};font-weight:600">'
                 f'{escape(_shorten(title, 80))}</text>')
    return parts


def _change_mark(change: Change, x: float, series: Series, unit: str) -> str:
    colour = "#d62728" if change.regression else "#2ca02c" if change.verdict in _IMPROVEMENTS \
        else "#888"
    tip = (f"{change.verdict}{' (regression)' if change.regression else ''}: "
           f"x{change.ratio:.3f} [{change.low:.3f}, {change.high:.3f}] first at "
           f"{change.after.label} (run {change.after.name}), after {change.before.label}")
    return (f'<line class="change" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" '
            f'y2="{HEIGHT - _BOTTOM}" stroke="{colour}" stroke-width="2" '
            f'stroke-dasharray="5,3"><title>{escape(tip)}</title></line>')


def _x_labels(series: Series, changes: Sequence[Change],
              x: Callable[[int], float]) -> list[str]:
    """Commit labels under the first run, the last, and the first run after each change."""
    count = len(series.points)
    chosen = sorted({0, count - 1, *(c.position for c in changes)})
    parts, last_x = [], -1e9
    for position in chosen:
        px = x(position)
        if px - last_x < 70 and position != count - 1:
            continue
        last_x = px
        run = series.points[position].run
        parts.append(f'<text x="{px:.1f}" y="{HEIGHT - _BOTTOM + 14}" text-anchor="middle" '
                     f'style="{_FONT}" fill="#444"><title>{escape(run.created_at)}</title>'
                     f'{escape(run.label[:16])}</text>')
    return parts


def _shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head = (limit - 1) // 2
    return text[:head] + "…" + text[len(text) - (limit - 1 - head):]
