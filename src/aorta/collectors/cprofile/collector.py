"""`cprofile`: Python's own deterministic profiler, run by `aorta.launchers.cprofile_run`. It
needs no GPU, so a sweep can be tried on any machine before it goes near an expensive one.
Argv, options and metrics: docs/collectors/README.md.
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import Literal

from pydantic import Field

from aorta.collectors.attach_failure import with_attach_failure
from aorta.collectors.base import (Capability, Collector, CollectorOptions, Launch, Metrics,
                                   TrialContext, TrialOutcome, capture_status, cut_short,
                                   importable_by_child, settle)
from aorta.collectors.python_launch import split_python_launch
from aorta.collectors.ranks import rank_name, rank_of, summarize_ranks
from aorta.parsers.pstats_file import read_pstats

DUMP = "profile.pstats"
# Not `python -m cProfile`: it swallows SystemExit, so `sys.exit(3)` would read as a pass.
LAUNCHER = "aorta.launchers.cprofile_run"
TABLE_ROWS = 50


class CProfileOptions(CollectorOptions):
    sort: Literal["tottime", "cumulative"] = Field(
        "tottime", description="how top functions are ranked: own time or time including callees")


class CProfileCollector(Collector[CProfileOptions]):
    name = "cprofile"
    wrap_rank = 90
    per_process = True
    options_model = CProfileOptions
    summary = "Python's cProfile: time and calls per Python function; runs anywhere"

    def wrap(self, launch: Launch, out_dir: Path, options: CProfileOptions,
             ctx: TrialContext) -> Launch:
        py = split_python_launch(launch.argv, self.name,
                                 "run the script with python (or pytest) directly, or use "
                                 "another collector for native commands")
        dump = out_dir / (rank_name("profile", ".pstats") if ctx.per_rank else DUMP)
        argv = py.through(LAUNCHER, ["--out", str(dump)])
        return importable_by_child(Launch(argv, launch.env, launch.unset), ctx, py.flags)

    def summarize(self, out_dir: Path, options: CProfileOptions, outcome: TrialOutcome) -> Metrics:
        metrics: Metrics = {"cprofile_artifact_dir": str(out_dir)}
        per_rank = {rank: self._read(dump, options)
                    for dump in sorted(out_dir.glob("profile.rank*.pstats"))
                    if (rank := rank_of(dump.name)) is not None}
        if per_rank:
            return metrics | summarize_ranks(self.name, per_rank, "time_ms", "call_count")
        if not (out_dir / DUMP).is_file():
            why = cut_short(outcome, "cProfile wrote its profile") or \
                "cProfile wrote no profile (the process was killed before it could)"
            return with_attach_failure(self.name, metrics | capture_status(
                self.name, "missing", why), outcome)
        return metrics | self._read(out_dir / DUMP, options)

    def _read(self, dump: Path, options: CProfileOptions) -> Metrics:
        try:
            summary = read_pstats(dump)
        except (ValueError, OSError) as exc:
            return capture_status(self.name, "unparsed", str(exc))
        if not summary.functions:
            if summary.skips:
                return capture_status(self.name, "unparsed", summary.skips.describe("entry"),
                                      summary.skips.count)
            return capture_status(self.name, "empty", "the profile holds no function")
        cumulative = options.sort == "cumulative"
        rows = sorted(summary.functions, key=lambda r: -r.cum_ms) if cumulative \
            else summary.functions
        times = [r.cum_ms if cumulative else r.self_ms for r in rows[:TABLE_ROWS]]
        figures = {
            "cprofile_time_ms": summary.total_ms,
            "cprofile_call_count": summary.calls,
            "cprofile_top_function_ms": times[0],
            "cprofile_top_functions": [r.name for r in rows[:5]],
            "cprofile_functions": [{"name": r.name, "calls": r.calls, "total_ms": ms}
                                   for r, ms in zip(rows, times)],
        }
        return settle(self.name, figures, summary.skips.count,
                      f"{summary.skips.describe('entry')}; figures cover only the entries read")

    def probe(self) -> Capability:
        return Capability(self.name, True, platform.python_version(),
                          "part of the Python standard library")
