"""`cprofile`: Python's own deterministic profiler, for payloads that run anywhere.

Wraps `python [safe flags] script.py args` into `python [flags] -m cProfile -o <dir>/profile.pstats
script.py args` (pytest launches into `-m cProfile ... -m pytest`). It needs no GPU, so a sweep
can be tried on any machine before it goes near an expensive one.

Metrics: `cprofile_time_ms` (self time summed over every function), `cprofile_call_count`,
`cprofile_top_function_ms`, `cprofile_top_functions` (up to 5), `cprofile_functions` (top 50
rows), `cprofile_artifact_dir`, `cprofile_capture`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import Field

from aorta.collectors.base import (Capability, Collector, CollectorOptions, Launch, Metrics,
                                   TrialContext, TrialOutcome, capture_status)
from aorta.collectors.python_launch import split_python_launch
from aorta.parsers.pstats_file import read_pstats

__all__ = ["CProfileCollector", "CProfileOptions"]

DUMP = "profile.pstats"
TABLE_ROWS = 50


class CProfileOptions(CollectorOptions):
    sort: Literal["tottime", "cumulative"] = Field(
        "tottime", description="how top functions are ranked: own time or time including callees")


class CProfileCollector(Collector):
    name = "cprofile"
    wrap_rank = 90
    options_model = CProfileOptions
    summary = "Python's cProfile: time and calls per Python function; runs anywhere"

    def wrap(self, launch: Launch, out_dir: Path, options: CollectorOptions,
             ctx: TrialContext) -> Launch:
        py = split_python_launch(launch.argv, self.name,
                                 "run the script with python (or pytest) directly, or use "
                                 "another collector for native commands")
        dump = str(out_dir / DUMP)
        head = [py.python, *py.flags, "-m", "cProfile", "-o", dump]
        target = ["-m", "pytest", *py.args] if py.is_pytest else [py.script or "", *py.args]
        return Launch(tuple(head + target), launch.env, launch.unset)

    def summarize(self, out_dir: Path, options: CollectorOptions,
                  outcome: TrialOutcome) -> Metrics:
        metrics: Metrics = {"cprofile_artifact_dir": str(out_dir)}
        dump = out_dir / DUMP
        if not dump.is_file():
            why = "the payload never started" if not outcome.launched else \
                "cProfile wrote no profile (the process was killed before it could)"
            return metrics | capture_status(self.name, "missing", why)
        try:
            summary = read_pstats(dump)
        except (ValueError, OSError) as exc:
            return metrics | capture_status(self.name, "unparsed", str(exc))
        if not summary.functions:
            return metrics | capture_status(self.name, "empty", "the profile holds no function")
        assert isinstance(options, CProfileOptions)
        cumulative = options.sort == "cumulative"
        rows = sorted(summary.functions, key=lambda r: -r.cum_ms) if cumulative else summary.functions
        ms = (lambda r: r.cum_ms) if cumulative else (lambda r: r.self_ms)
        metrics.update({
            "cprofile_time_ms": summary.total_ms,
            "cprofile_call_count": summary.calls,
            "cprofile_top_function_ms": ms(rows[0]),
            "cprofile_top_functions": [r.name for r in rows[:5]],
            "cprofile_functions": [{"name": r.name, "calls": r.calls, "total_ms": ms(r)}
                                   for r in rows[:TABLE_ROWS]],
        })
        return metrics | capture_status(self.name, "ok")

    def probe(self) -> Capability:
        return Capability(self.name, True, version=sys.version.split()[0],
                          reason="part of the Python standard library")
