"""How a launcher says that its profiler could not attach inside the payload's process: one
stderr line, `aorta: <collector>: could not attach: <why>`, and no payload run. The collector reads
it back (`collectors.attach_failure`) and the trial is an `error`, not a `fail`: the payload was
never measured. Imported by launchers, so it stays standard library only.
"""

from __future__ import annotations

import sys
from typing import TextIO


def attach_line(collector: str) -> str:
    return f"aorta: {collector}: could not attach: "


def say_not_attached(collector: str, why: str, stream: TextIO | None = None) -> None:
    print(attach_line(collector) + " ".join(why.split()), file=stream or sys.stderr, flush=True)
