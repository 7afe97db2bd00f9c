"""A trend plot: runs along x (oldest left), a metric along y. Each run shows its trials as
small dots and its median as a point on a line; a dashed vertical line marks each change,
with its description in a `<title>`, which a browser shows on hover."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aorta.rendering.escape import h
from aorta.rendering.short_names import short_name
from aorta.rendering.svg import Scale, nice_ticks, svg_open, tick_labels

WIDTH, HEIGHT = 560, 210
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 16, 12, 46
_FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:11px"


@dataclass(frozen=True)
class TrendRun:
    values: Sequence[float]     # the run's trials
    median: float
    tip: str                    # hover text of the median's point
    label: str                  # under the axis (a commit), cut to 16 characters
    when: str                   # hover text of the label
    hollow: bool = False        # a point to show but not to trust (an incomplete run)


@dataclass(frozen=True)
class TrendMark:
    position: int               # the first run after the change
    colour: str
    tip: str


def trend_plot(label: str, title: str, runs: Sequence[TrendRun],
               marks: Sequence[TrendMark]) -> str:
    """The plot's markup (`label` for screen readers, `title` under the axis); "" without runs."""
    if not runs:
        return ""
    ticks = nice_ticks(min(v for r in runs for v in r.values),
                       max(v for r in runs for v in r.values), 4)
    y = Scale(ticks[0], ticks[-1], HEIGHT - _BOTTOM, _TOP).x
    span, count = WIDTH - _LEFT - _RIGHT, len(runs)
    xs = [_LEFT + (span * (position + 0.5) / count) for position in range(count)]
    parts = [svg_open(WIDTH, HEIGHT, label, "chart trend")]
    for tick, text in zip(ticks, tick_labels(ticks)):
        parts += [f'<line x1="{_LEFT}" x2="{WIDTH - _RIGHT}" y1="{y(tick):.1f}" '
                  f'y2="{y(tick):.1f}" stroke="#eee"/>',
                  f'<text x="{_LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" '
                  f'style="{_FONT}" fill="#444">{h(text)}</text>']
    parts.append(f'<text x="{_LEFT}" y="{HEIGHT - 4}" style="{_FONT};font-weight:600">'
                 f'{h(short_name(title, 80))}</text>')
    parts += [_mark(m, xs[m.position] - span / count / 2) for m in marks]
    path = " ".join(f"{'L' if i else 'M'}{xs[i]:.1f},{y(r.median):.1f}"
                    for i, r in enumerate(runs))
    parts.append(f'<path d="{path}" fill="none" stroke="#4c78a8" stroke-width="1.5"/>')
    for x, run in zip(xs, runs):
        parts += [f'<circle cx="{x:.1f}" cy="{y(v):.1f}" r="2" fill="#9ab"></circle>'
                  for v in run.values]
        fill = 'fill="#fff" stroke="#1f5fa8" class="hollow"' if run.hollow else 'fill="#1f5fa8"'
        parts.append(f'<circle cx="{x:.1f}" cy="{y(run.median):.1f}" r="3.5" '
                     f'{fill}><title>{h(run.tip)}</title></circle>')
    parts += _x_labels(runs, marks, xs)
    parts.append("</svg>")
    return "\n".join(parts)


def _mark(mark: TrendMark, x: float) -> str:
    return (f'<line class="change" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" '
            f'y2="{HEIGHT - _BOTTOM}" stroke="{mark.colour}" stroke-width="2" '
            f'stroke-dasharray="5,3"><title>{h(mark.tip)}</title></line>')


def _x_labels(runs: Sequence[TrendRun], marks: Sequence[TrendMark],
              xs: Sequence[float]) -> list[str]:
    """Labels under the first run, the last, and the first run after each change."""
    last = len(runs) - 1
    parts, last_x = [], -1e9
    for position in sorted({0, last, *(m.position for m in marks)}):
        if xs[position] - last_x < 70 and position != last:
            continue
        last_x = xs[position]
        run = runs[position]
        parts.append(f'<text x="{last_x:.1f}" y="{HEIGHT - _BOTTOM + 14}" '
                     f'text-anchor="middle" style="{_FONT}" fill="#444">'
                     f'<title>{h(run.when)}</title>{h(run.label[:16])}</text>')
    return parts
