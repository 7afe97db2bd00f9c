"""Hand-written inline SVG, no plotting library and no script: the pieces every chart shares,
a strip plot of trials per cell, and horizontal bars. All text is escaped, and each mark has a
`<title>` so a browser shows its value on hover."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from aorta.rendering.escape import h
from aorta.rendering.numbers import fmt, fmt_with_unit
from aorta.rendering.short_names import short_names

STRIP_WIDTH = 560
BAR_WIDTH = 1000
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
            "#e377c2", "#7f7f7f", "#bcbd22")
FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:12px"
MONO = "font-family:ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace;font-size:{}px"


@dataclass(frozen=True)
class StripRow:
    """One cell's row: its passing trials as (trial index, value), and their median."""

    label: str
    points: Sequence[tuple[int, float]]
    median: float | None
    colour: str
    hollow: bool = False    # drawn as rings: a second series in the same colour


@dataclass(frozen=True)
class Bar:
    label: str
    value: float
    note: str = ""          # shown after the value, e.g. "in 2/3 trials"
    tooltip: str = ""


@dataclass(frozen=True)
class Scale:
    """Values from `low` to `high` drawn from `left` to `right` (pixels; `right` < `left`
    runs the other way, as a y axis does)."""

    low: float
    high: float
    left: float
    right: float

    def x(self, value: float) -> float:
        span = self.high - self.low or 1.0
        return self.left + (value - self.low) / span * (self.right - self.left)


def cell_colour(position: int) -> str:
    return _PALETTE[position % len(_PALETTE)]


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2 or 5 times a power of ten) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or high < low:
        return [0.0]
    if high == low:
        pad = abs(low) * 0.05 or 1.0
        low, high = low - pad, high + pad
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    start, end = math.floor(low / step), math.ceil(high / step + 0.5)   # counted: always ends
    ticks = [round(i * step, 12) for i in range(start, end)]
    if ticks[-1] < high:
        ticks.append(round(end * step, 12))
    return ticks


def tick_labels(ticks: Sequence[float]) -> list[str]:
    """Labels with just enough decimals to tell neighbouring ticks apart (3,556.5 vs 3,557);
    `ticks` as `nice_ticks` gives them, never empty."""
    largest = max(abs(t) for t in ticks)
    style = "e" if largest >= 1e7 or 0 < largest < 1e-3 else ",f"
    for decimals in range(0, 10):
        labels = [f"{t:{style[:-1]}.{decimals}{style[-1]}}" if t else "0" for t in ticks]
        if len(set(labels)) == len(labels) and all(
                math.isclose(float(text.replace(",", "")), t, rel_tol=1e-9, abs_tol=1e-12)
                for text, t in zip(labels, ticks)):
            return labels
    return [fmt(t) for t in ticks]


def svg_open(width: int, height: float, label: str, css: str = "chart") -> str:
    return (f'<svg viewBox="0 0 {width} {height:.0f}" width="{width}" height="{height:.0f}" '
            f'role="img" aria-label="{h(label)}" class="{css}">')


def axis_label(title: str, unit: str) -> str:
    return f"{title} ({unit})" if unit else title


def strip_plot(title: str, unit: str, rows: Sequence[StripRow]) -> str:
    """One dot per trial, one row per cell; a dark tick marks the median, a grey line the range."""
    values = [v for row in rows for _, v in row.points]
    if not values:
        return ""
    ticks = nice_ticks(min(values), max(values))
    left = 12 + 7 * min(30, max(len(row.label) for row in rows))
    right, row_h, top = 24, 26, 8
    height = top + row_h * len(rows) + 44
    scale = Scale(ticks[0], ticks[-1], left, STRIP_WIDTH - right)
    parts = [svg_open(STRIP_WIDTH, height, f"{title}: trials per cell")]
    labels = short_names([row.label for row in rows], 30)
    for position, row in enumerate(rows):
        y = top + row_h * position + row_h / 2
        parts += _strip_row(row, labels[row.label], y, left, scale, unit)
    parts += _x_axis(scale, ticks, top + row_h * len(rows) + 4, axis_label(title, unit))
    parts.append("</svg>")
    return "\n".join(parts)


def bar_chart(title: str, unit: str, bars: Sequence[Bar]) -> str:
    """Horizontal bars from zero, longest first, labelled with the value and its note; a long
    label is shortened (the tooltip gives it whole)."""
    if not bars:
        return ""
    label_w, value_w, row_h, top = 430, 190, 20, 6
    ticks = nice_ticks(0.0, max(b.value for b in bars) or 1.0, 5)
    scale = Scale(0.0, ticks[-1], label_w, BAR_WIDTH - value_w)
    height = top + row_h * len(bars) + 44
    parts = [svg_open(BAR_WIDTH, height, title)]
    labels = short_names([bar.label for bar in bars], 62)
    for position, bar in enumerate(bars):
        y = top + row_h * position
        width = max(1.0, scale.x(bar.value) - label_w)
        value_text = fmt_with_unit(bar.value, unit) + (f"  {bar.note}" if bar.note else "")
        parts += [
            f'<g><title>{h(bar.tooltip or f"{bar.label}: {fmt_with_unit(bar.value, unit)}")}'
            f'</title>',
            f'<text x="{label_w - 8}" y="{y + 14}" text-anchor="end" style="{MONO.format(11)}">'
            f'{h(labels[bar.label])}</text>',
            f'<rect x="{label_w}" y="{y + 3}" width="{width:.1f}" height="{row_h - 6}" '
            f'fill="#4c78a8"/>',
            f'<text x="{label_w + width + 6:.1f}" y="{y + 14}" style="{FONT}" fill="#333">'
            f'{h(value_text)}</text></g>',
        ]
    parts += _x_axis(scale, ticks, top + row_h * len(bars) + 2, axis_label(title, unit))
    parts.append("</svg>")
    return "\n".join(parts)


def _strip_row(row: StripRow, label: str, y: float, left: float, scale: Scale,
               unit: str) -> list[str]:
    parts = [f'<line x1="{left}" x2="{scale.right}" y1="{y}" y2="{y}" stroke="#eee"/>',
             f'<text x="{left - 8}" y="{y + 4}" text-anchor="end" style="{FONT}">'
             f'<title>{h(row.label)}</title>{h(label)}</text>']
    values = [v for _, v in row.points]
    if values:
        parts.append(f'<line x1="{scale.x(min(values)):.1f}" x2="{scale.x(max(values)):.1f}" '
                     f'y1="{y}" y2="{y}" stroke="#999" stroke-width="2"/>')
    if row.median is not None:
        mx = scale.x(row.median)
        parts.append(f'<line x1="{mx:.1f}" x2="{mx:.1f}" y1="{y - 9}" y2="{y + 9}" '
                     f'stroke="#222" stroke-width="2.5"><title>{h(row.label)} median: '
                     f'{h(fmt_with_unit(row.median, unit))}</title></line>')
    for trial, value in row.points:
        jitter = ((trial % 5) - 2) * 2.2   # separates equal values without hiding any
        fill = 'fill="white"' if row.hollow else f'fill="{row.colour}" fill-opacity="0.7"'
        parts.append(f'<circle cx="{scale.x(value):.1f}" cy="{y + jitter:.1f}" r="4.5" '
                     f'{fill} stroke="{row.colour}" stroke-width="1.5">'
                     f'<title>{h(row.label)} trial_{trial}: '
                     f'{h(fmt_with_unit(value, unit))}</title></circle>')
    return parts


def _x_axis(scale: Scale, ticks: Sequence[float], y: float, label: str) -> list[str]:
    parts = [f'<line x1="{scale.left}" x2="{scale.right}" y1="{y}" y2="{y}" stroke="#555"/>']
    for tick, text in zip(ticks, tick_labels(ticks)):
        x = scale.x(tick)
        parts += [f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{y}" y2="{y + 4}" stroke="#555"/>',
                  f'<text x="{x:.1f}" y="{y + 16}" text-anchor="middle" style="{FONT}" '
                  f'fill="#444">{h(text)}</text>']
    middle = (scale.left + scale.right) / 2
    parts.append(f'<text x="{middle:.1f}" y="{y + 34}" text-anchor="middle" '
                 f'style="{FONT};font-weight:600">{h(label)}</text>')
    return parts
