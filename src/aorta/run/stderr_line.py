"""The one line of a failing trial's stderr worth printing beside its verdict.

A payload that dies usually says why on its last real line (`ValueError: size must be
positive`, `RuntimeError: CUDA error: out of memory`); what follows it is often noise: blank
lines, progress bars redrawn with carriage returns (`100%|##########| 50/50 [00:01<00:00]`),
colour codes. The line is made safe to print on a terminal and in Markdown: colour codes are
dropped, every other control character is escaped (`\\x07`), and it is cut to a bounded length.
"""

from __future__ import annotations

import re

MAX_LINE_CHARS = 200

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
# Progress meters: tqdm/rich bars, bare percentages, "12/50" counters, spinners and rules.
_PROGRESS = (
    re.compile(r"\d{1,3}(\.\d+)?%\s*\|"),                 # tqdm: " 45%|####      | 9/20"
    re.compile(r"^[\s\d.:/%|#=>\-*.\u2580-\u259f\u2800-\u28ff\u2500-\u257f]*$"),  # bars, rules
    re.compile(r"\[\d+:\d+(:\d+)?<\d+:\d+(:\d+)?"),          # tqdm: "[00:01<00:02, ...]"
    re.compile(r"\b\d+(\.\d+)?\s*(it|s)/(s|it)\b"),       # rates: "3.2it/s"
    re.compile(r"^\s*(progress|loading|downloading)\b.*\d+(\.\d+)?\s*%\s*$", re.IGNORECASE),
    # C++ libraries' log lines (glog, Kineto): "I1204 01:07:08.1 file.cpp:59] profiler_stop"
    re.compile(r"\.(cc|cpp|cxx|cu|h|hpp):\d+\]"),
)


def last_meaningful_line(text: str | None, limit: int = MAX_LINE_CHARS) -> str | None:
    """The last line of `text` that is neither blank nor progress noise, printable and at
    most `limit` characters (cut with `...`); None when there is none."""
    if not text:
        return None
    # splitlines() also splits at carriage returns, so each redraw of a bar is a line of its own.
    for raw in reversed(text.splitlines()):
        line = _COLOUR.sub("", raw).strip()
        if not line or any(p.search(line) for p in _PROGRESS):
            continue
        return _bounded(_escaped(line), limit)
    return None


def _escaped(line: str) -> str:
    out = []
    for ch in line:
        code = ord(ch)
        if ch == "\t":
            out.append(" ")
        elif code < 0x20 or code == 0x7f or 0x80 <= code < 0xa0:
            out.append(f"\\x{code:02x}")
        else:
            out.append(ch)
    return "".join(out)


def _bounded(line: str, limit: int) -> str:
    return line if len(line) <= limit else line[:max(0, limit - 3)].rstrip() + "..."
