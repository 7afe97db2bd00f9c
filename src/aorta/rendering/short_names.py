"""Kernel names short enough for a table column, still telling kernels apart (docs/compare.md,
"Long names in tables"). Steps, stopping once the name fits: 1. drop a leading `void `;
2. elide the parameter list, `(...)`; 3. keep both ends of each template argument list,
`Kernel2<cutlass_80_s...nn_align1>`; 4. failing that, keep both ends of the name from step 2,
`cutlass::Ke...align1>(...)`. Display only: JSON and tooltips keep the full name, and compare
matches kernels by their normalised names, never by these.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

ELLIPSIS = "..."
_MIN_WIDTH = 12


def short_name(name: str, width: int) -> str:
    """`name` cut to at most `width` characters (at least 12) by the steps above."""
    width = max(width, _MIN_WIDTH)
    if len(name) <= width:
        return name
    text = name[len("void "):] if name.startswith("void ") else name
    if len(text) > width:
        text = _elide_parameters(text)
    if len(text) <= width:
        return text
    squeezed = _squeeze_templates(text, width)
    # Step 4 works on the unsqueezed name, so that ellipses never stack.
    return squeezed if len(squeezed) <= width else _middle(text, width)


def short_names(names: Sequence[str], width: int) -> dict[str, str]:
    """Each name's short form for one table, no two alike: names that would clash take step 4
    alone, and if they still clash a `~1`, `~2` suffix in the order given."""
    width = max(width, _MIN_WIDTH)
    short = {name: short_name(name, width) for name in dict.fromkeys(names)}
    clashes = Counter(short.values())
    for name, text in short.items():
        if clashes[text] > 1:
            short[name] = _middle(name, width)
    clashes = Counter(short.values())
    seen: Counter[str] = Counter()
    for name, text in short.items():
        if clashes[text] > 1:
            seen[text] += 1
            tag = f"~{seen[text]}"
            short[name] = _middle(name, width - len(tag)) + tag
    return short


def _elide_parameters(text: str) -> str:
    """`f<T>(a, b)` -> `f<T>(...)`, when a top-level parenthesised list ends the name."""
    if not text.endswith(")"):
        return text
    depth = 0
    for i in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[i], 0)
        if depth == 0:
            inside = text[i + 1:-1]
            return text if len(inside) <= len(ELLIPSIS) else f"{text[:i + 1]}{ELLIPSIS})"
    return text


def _squeeze_templates(text: str, width: int) -> str:
    spans = _template_spans(text)
    excess, keep = len(text) - width, {}
    for start, end in sorted(spans, key=lambda span: span[0] - span[1]):   # longest first
        inside = end - start - 1
        kept = max(len(ELLIPSIS) + 2, inside - excess)
        if excess <= 0 or kept >= inside:
            continue
        keep[start] = kept
        excess -= inside - kept
    out, last = [], 0
    for start, end in spans:
        if start in keep:
            out.append(text[last:start + 1] + _middle(text[start + 1:end], keep[start]))
            last = end
    return "".join(out) + text[last:]


def _template_spans(text: str) -> list[tuple[int, int]]:
    """(index of `<`, index of its `>`) for every top-level template argument list: a `<`
    right after a name character, as in `names.strip_templates`."""
    spans, depth, start = [], 0, -1
    for i, char in enumerate(text):
        if char == "<" and (depth or (i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"))):
            if depth == 0:
                start = i
            depth += 1
        elif char == ">" and depth and text[i - 1] != "-":
            depth -= 1
            if depth == 0:
                spans.append((start, i))
    return spans


def _middle(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    room = max(width - len(ELLIPSIS), 2)
    head = (room + 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (room - head):]
