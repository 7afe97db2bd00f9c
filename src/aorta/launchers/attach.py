"""How a launcher says that its profiler could not attach inside the payload's process.

The launcher prints one line on stderr, `aorta: <collector>: could not attach: <why>`, and
exits without running the payload. The collector reads that line back after the trial
(`aorta.collectors.attach_failure`), and the trial becomes an `error` with `<why>` as its
reason: the payload did not fail, it was never measured. Imported by launchers, so it stays
free of anything heavier than the standard library.
"""

from __future__ import annotations

import sys
from typing import TextIO


def attach_line(collector: str) -> str:
    """The prefix of the line that reports a failed attach for `collector`."""
    return f"aorta: {collector}: could not attach: "


def say_not_attached(collector: str, why: str, stream: TextIO | None = None) -> None:
    print(attach_line(collector) + " ".join(why.split()), file=stream or sys.stderr, flush=True)
