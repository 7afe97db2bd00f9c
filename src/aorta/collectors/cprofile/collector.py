"""`cprofile`: Python's own deterministic profiler, for payloads that run anywhere.

Wraps `python [safe flags] script.py args` into `python [flags] -m aorta.launchers.cprofile_run
--out <dir>/profile.pstats -- script.py args` (pytest launches into `... --pytest -- args`): the
launcher profiles like `python -m cProfile` but keeps the payload's exit status. It needs no
GPU, so a sweep can be tried on any machine before it goes near an expensive one.

Metrics: `cprofile_time_ms` (self time summed over every function), `cprofile_call_count`,
`cprofile_top_function_ms`, `cprofile_top_functions` (up to 5), `cprofile_functions` (top 50
rows), `cprofile_artifact_dir`, `cprofile_capture`, and `cprofile_skipped` when entries of the
dump were left out (a `partial` capture, docs/collectors/reading.md).
"""

from __future__ import annotations

import platform
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from aorta.base.errors import SetupError
from aorta.collectors.attach_failure import with_attach_failure
from aorta.collectors.base import (Capability, Collector, CollectorOptions, Launch, Metrics,
                                   TrialContext, TrialOutcome, capture_status, settle)
from aorta.collectors.child_import import importable_by_child
from aorta.collectors.python_launch import split_python_launch
from aorta.collectors.ranks import rank_name, rank_of, rollup
from aorta.parsers.skips import Skips

if TYPE_CHECKING:  # readers load only when a capture is read: listing collectors stays quick
    from aorta.parsers.pstats_file import FunctionRow

DUMP = "profile.pstats"
# Not `python -m cProfile`: it swallows SystemExit, so `sys.exit(3)` would read as a pass.
LAUNCHER = "aorta.launchers.cprofile_run"
TABLE_ROWS = 50


class CProfileOptions(CollectorOptions):
    sort: Literal["tottime", "cumulative"] = Field(
        "tottime", description="how top functions are ranked: own time or time including callees")


class CProfileCollector(Collector):
    name = "cprofile"
    wrap_rank = 90
    per_process = True
    options_model = CProfileOptions
    summary = "Python's cProfile: time and calls per Python function; runs anywhere"

    def wrap(self, launch: Launch, out_dir: Path, options: CollectorOptions,
             ctx: TrialContext) -> Launch:
        py = split_python_launch(launch.argv, self.name,
                                 "run the script with python (or pytest) directly, or use "
                                 "another collector for native commands")
        dump = str(out_dir / (rank_name("profile", ".pstats") if ctx.per_rank else DUMP))
        head = [py.python, *py.flags, "-m", LAUNCHER, "--out", dump]
        target = ["--pytest", "--", *py.args] if py.is_pytest else ["--", py.script or "", *py.args]
        wrapped = Launch(tuple(head + target), launch.env, launch.unset)
        return importable_by_child(wrapped, ctx, py.flags, SetupError, "install aorta "
                                   "(pip install -e .) in the payload's Python")

    def summarize(self, out_dir: Path, options: CollectorOptions,
                  outcome: TrialOutcome) -> Metrics:
        from aorta.parsers.pstats_file import read_pstats

        metrics: Metrics = {"cprofile_artifact_dir": str(out_dir)}
        ranked = {rank_of(p.name): p for p in sorted(out_dir.glob("profile.rank*.pstats"))}
        ranked.pop(None, None)
        if ranked:
            return metrics | self._summarize_ranks(ranked, options)
        dump = out_dir / DUMP
        if not dump.is_file():
            why = "the payload never started" if not outcome.launched else \
                "cProfile wrote no profile (the process was killed before it could)"
            return with_attach_failure(self.name, metrics | capture_status(
                self.name, "missing", why), outcome)
        try:
            summary = read_pstats(dump)
        except (ValueError, OSError) as exc:
            return metrics | capture_status(self.name, "unparsed", str(exc))
        if not summary.functions:
            if summary.skips:
                return metrics | capture_status(self.name, "unparsed", summary.skips.describe(
                    "entry"), summary.skips.count)
            return metrics | capture_status(self.name, "empty", "the profile holds no function")
        assert isinstance(options, CProfileOptions)
        cumulative = options.sort == "cumulative"
        rows = sorted(summary.functions, key=lambda r: -r.cum_ms) if cumulative else summary.functions

        def ms(row: FunctionRow) -> float:
            return row.cum_ms if cumulative else row.self_ms

        figures = {
            "cprofile_time_ms": summary.total_ms,
            "cprofile_call_count": summary.calls,
            "cprofile_top_function_ms": ms(rows[0]),
            "cprofile_top_functions": [r.name for r in rows[:5]],
            "cprofile_functions": [{"name": r.name, "calls": r.calls, "total_ms": ms(r)}
                                   for r in rows[:TABLE_ROWS]],
        }
        return metrics | settle(self.name, figures, summary.skips.count,
                                f"{summary.skips.describe('entry')}; figures cover only the "
                                f"entries read")

    def _summarize_ranks(self, dumps: dict[str | None, Path],
                         options: CollectorOptions) -> Metrics:
        """One dump per rank: each rank's figures, then the roll-up over ranks."""
        from aorta.parsers.pstats_file import read_pstats

        per_rank: dict[str, dict[str, float]] = {}
        damaged = Skips()
        for rank, dump in dumps.items():
            try:
                summary = read_pstats(dump)
            except (ValueError, OSError) as exc:
                return capture_status(self.name, "unparsed", f"rank {rank}: {exc}")
            if summary.skips:
                damaged.absorb(summary.skips, f"rank {rank}")
            per_rank[str(rank)] = {"time_ms": summary.total_ms, "call_count": summary.calls}
        figures = rollup(self.name, per_rank, "time_ms", "call_count")
        return settle(self.name, figures, damaged.count,
                      f"{damaged.describe('entry')}; figures cover only the entries read")

    def probe(self) -> Capability:
        return Capability(self.name, True, platform.python_version(),
                          "part of the Python standard library")
