"""A trend plot, small enough for a grid of them: runs along x (oldest left), a metric along y.
Each run shows its trials as small dots and its median as a point on a line; a dashed vertical
line marks each change, with its description in a `<title>`, which a browser shows on hover.
Text is monospace, so its width is known here: the title wraps onto two lines (shortened in
the middle beyond that, the whole in a `<title>`), and about one x tick per 80 px is labelled
with the run's commit and date, none past the plot's edge."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from aorta.rendering.escape import h
from aorta.rendering.short_names import short_name
from aorta.rendering.svg import MONO, Scale, nice_ticks, svg_open, tick_labels

WIDTH, HEIGHT = 370, 206
LEFT, RIGHT, TOP, BOTTOM = 58, 10, 40, 36
CHAR_WIDTH = {11: 6.6, 10: 6.0}      # px per character of the monospace font, by size (0.6 em)
_TICK_SPACING = 80


@dataclass(frozen=True)
class TrendRun:
    values: Sequence[float]     # the run's trials
    median: float
    tip: str                    # hover text of the median's point
    label: str                  # first line under the axis (a commit), up to 11 characters
    when: str                   # second line (a date), up to 11 characters
    hollow: bool = False        # a point to show but not to trust (an incomplete run)


@dataclass(frozen=True)
class TrendMark:
    position: int               # the first run after the change
    colour: str
    tip: str


def title_lines(title: str, width: float = WIDTH - 8, size: int = 11) -> list[str]:
    """`title` in at most two lines that fit `width` px: broken after a separator (`:`, `/`,
    `,`, a space, before `(` or `<`) where one falls, the rest shortened by the one rule of short_names."""
    chars = int(width // CHAR_WIDTH[size])
    if len(title) <= chars:
        return [title]
    cuts = [m.end() for m in re.finditer(r"[:/, ]+|(?=[(<])", title[:chars + 1])
            if chars // 3 <= m.end() <= chars]
    cut = cuts[-1] if cuts else chars
    return [title[:cut], short_name(title[cut:], chars)]


def x_ticks(count: int, span: float = WIDTH - LEFT - RIGHT) -> list[int]:
    """Positions to label: evenly spread, about one per `_TICK_SPACING` px, first and last."""
    wanted = max(2, min(count, int(span // _TICK_SPACING) + 1))
    return sorted({round(i * (count - 1) / (wanted - 1)) for i in range(wanted)}) if count > 1 \
        else [0]


def trend_plot(label: str, title: str, runs: Sequence[TrendRun],
               marks: Sequence[TrendMark]) -> str:
    """The plot's markup (`label` for screen readers, `title` above the plot); "" without
    runs. A mark's position counts from the first of `runs`."""
    if not runs:
        return ""
    ticks = nice_ticks(min(v for r in runs for v in r.values),
                       max(v for r in runs for v in r.values), 4)
    y = Scale(ticks[0], ticks[-1], HEIGHT - BOTTOM, TOP).x
    texts = tick_labels(ticks)
    left = max(LEFT, 6 + CHAR_WIDTH[10] * max(map(len, texts)))    # room for the widest
    span, count = WIDTH - left - RIGHT, len(runs)
    xs = [left + (span * (position + 0.5) / count) for position in range(count)]
    font10, font11 = MONO.format(10), MONO.format(11)
    parts = [svg_open(WIDTH, HEIGHT, label, "chart trend"), f"<title>{h(title)}</title>"]
    parts += [f'<text x="4" y="{13 + 14 * row}" style="{font11};font-weight:600">{h(line)}'
              "</text>" for row, line in enumerate(title_lines(title))]
    for tick, text in zip(ticks, texts):
        parts += [f'<line x1="{left:.1f}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" '
                  f'y2="{y(tick):.1f}" stroke="#eee"/>',
                  f'<text x="{left - 4:.1f}" y="{y(tick) + 3:.1f}" text-anchor="end" '
                  f'style="{font10}" fill="#444">{h(text)}</text>']
    for mark in marks:
        x = xs[mark.position] - span / count / 2
        parts.append(f'<line class="change" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" '
                     f'y2="{HEIGHT - BOTTOM}" stroke="{mark.colour}" stroke-width="2" '
                     f'stroke-dasharray="5,3"><title>{h(mark.tip)}</title></line>')
    path = " ".join(f"{'L' if i else 'M'}{xs[i]:.1f},{y(r.median):.1f}"
                    for i, r in enumerate(runs))
    parts.append(f'<path d="{path}" fill="none" stroke="#4c78a8" stroke-width="1.2"/>')
    for x, run in zip(xs, runs):
        parts += [f'<circle cx="{x:.1f}" cy="{y(v):.1f}" r="1.5" fill="#9ab"/>'
                  for v in run.values]
        fill = 'fill="#fff" stroke="#1f5fa8" class="hollow"' if run.hollow else 'fill="#1f5fa8"'
        parts.append(f'<circle cx="{x:.1f}" cy="{y(run.median):.1f}" r="2.5" '
                     f'{fill}><title>{h(run.tip)}</title></circle>')
    for position in x_ticks(count, span):
        for row, text in enumerate((runs[position].label, runs[position].when)):
            text = short_name(text, 11)
            half = len(text) * CHAR_WIDTH[10] / 2      # kept inside the plot's box
            x = min(max(xs[position], half + 1), WIDTH - half - 1)
            parts.append(f'<text x="{x:.1f}" y="{HEIGHT - BOTTOM + 15 + 11 * row}" '
                         f'text-anchor="middle" style="{font10}" fill="#444">{h(text)}</text>')
    parts.append("</svg>")
    return "\n".join(parts)
