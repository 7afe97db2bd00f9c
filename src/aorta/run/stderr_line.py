"""The one line of a failing trial's output worth printing beside its verdict: the last real
line of its stderr (`RuntimeError: CUDA error: out of memory`), else of its stdout for a
payload that prints its error there, past blank lines, redrawn progress bars
(`100%|##########| 50/50 [00:01<00:00]`) and colour codes. The line is made safe for a terminal
and Markdown: colour codes dropped, other control characters escaped (`\\x07`), length bounded.
"""

from __future__ import annotations

import re
from pathlib import Path

from aorta.store.reading import read_tail

MAX_LINE_CHARS = 200
TAIL_BYTES = 4096
ON_STDOUT = " (on stdout)"    # ends a failure's reason quoting stdout, not stderr

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
# Every control character but the tab (a space) is shown escaped: `\x07`.
_ESCAPES = {code: f"\\x{code:02x}" for code in [*range(0x20), 0x7f, *range(0x80, 0xa0)]}
_ESCAPES[ord("\t")] = " "
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
        line = line.translate(_ESCAPES)
        return line if len(line) <= limit else line[:max(0, limit - 3)].rstrip() + "..."
    return None


def telling_stream(trial_dir: Path, stderr_tail: str | None) -> tuple[str, str | None]:
    """(stream, its last meaningful line) of a trial that did not pass, given the end of its
    stderr: ("stderr", line), else ("stdout", line) when only stdout.log has one (a payload
    that prints its error there), else ("stderr", None)."""
    said = last_meaningful_line(stderr_tail)
    if said is None:
        printed = last_meaningful_line(read_tail(trial_dir / "stdout.log", TAIL_BYTES))
        if printed is not None:
            return "stdout", printed
    return "stderr", said


def quoted_stream(reason: str, stderr_tail: str | None) -> str:
    """The log a failure's `reason` quotes: stdout only when it is marked so and stderr had no
    line to read (the quoted line is the payload's, and could itself end in the mark)."""
    stdout = reason.endswith(ON_STDOUT) and last_meaningful_line(stderr_tail) is None
    return "stdout" if stdout else "stderr"
