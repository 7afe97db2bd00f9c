"""Issue 14: `stop_after` stops a cell once K of its trials ended with the event verdict;
the skipped trials are recorded in run.json and shown by status, perf.md, the summary and the
report; a resumed run decides as the first did."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

from aorta.recipe.schema import StopAfter
from aorta.store.records import TrialResult
from aorta.run.stop_after import cell_stop
from aorta_testing import run_aorta, write_recipe

# Each run of a trial appends its cell and index to a log, so the test sees what really ran.
PAYLOAD = """
import os, sys
with open(sys.argv[1], "a") as fh:
    fh.write(sys.argv[2] + "\\n")
sys.exit(int(sys.argv[2]))
"""


def _recipe(tmp_path: Path, stop: str = "{events: 2, max_trials: 5}") -> Path:
    return write_recipe(tmp_path, f"""
        schema_version: 1
        ticket: hunt
        stop_after: {stop}
        axes:
          exit:
            ok: {{args: ["0"]}}
            bad: {{args: ["3"]}}
    """)


def test_a_cell_stops_after_its_events_and_the_rest_is_skipped(tmp_path: Path, payload):
    script, log = payload(PAYLOAD), tmp_path / "ran.log"
    argv = ["sweep", "run", "--recipe", str(_recipe(tmp_path)), "--output", str(tmp_path / "o"),
            "--", sys.executable, str(script), str(log)]
    proc = run_aorta(*argv)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().split().count("3") == 2         # bad ran twice, then stopped
    assert log.read_text().split().count("0") == 5         # ok never met 2 fails: ran all 5
    run_dir = tmp_path / "o" / "hunt"
    run = json.loads((run_dir / "run.json").read_text())
    assert run["trials_per_cell"] == 5
    assert run["stop_after"] == {
        "events": 2, "max_trials": 5, "event_verdict": "fail",
        "cells": {"ok": {"trials_run": 5, "events": 0, "stopped": False, "skipped": []},
                  "bad": {"trials_run": 2, "events": 2, "stopped": True,
                          "skipped": [2, 3, 4]}}}
    assert sorted(p.name for p in (run_dir / "cells" / "bad").iterdir()) == ["trial_0", "trial_1"]
    assert "5/7 trial(s) passed (7 run now; 3 skipped by stop_after)" in proc.stdout
    assert "bad: stopped by stop_after after 2 trial(s) (2 fail); 3 skipped" in proc.stdout
    perf = (run_dir / "perf.md").read_text()
    assert "| bad | 5 | 0 | 2 | 0 | 0 | stopped by stop_after after 2 trial(s) (2 fail); 3 " \
           "skipped |" in perf
    matrix = json.loads((run_dir / "matrix.json").read_text())
    assert [(c["name"], c["skipped"], c["missing"]) for c in matrix["cells"]] == \
        [("ok", 0, 0), ("bad", 3, 0)]
    status = run_aorta("sweep", "status", str(run_dir))
    assert "7 complete (2 fail, 5 pass), 3 skipped" in status.stdout
    assert status.stdout.count("skipped   -") == 3
    report = run_aorta("report", str(run_dir), "--format", "md")
    assert "`bad`: stopped by stop_after after 2 trial(s) (2 fail); 3 skipped" in report.stdout
    assert "0 missing" in report.stdout
    # --strict: the failures are real, so exit 3; the skipped trials are not a failure.
    again = run_aorta(*argv[:2], "--strict", *argv[2:])
    assert again.returncode == 3, again.stderr
    assert len(log.read_text().split()) == 7                # the resume ran nothing


def test_flags_overlay_the_recipe_and_event_verdict_pass(tmp_path: Path, payload):
    script, log = payload(PAYLOAD), tmp_path / "ran.log"
    recipe = _recipe(tmp_path, "{events: 2, max_trials: 5, event_verdict: pass}")
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--stop-after-events", "1", "--max-trials", "3", "--",
                     sys.executable, str(script), str(log))
    assert proc.returncode == 0, proc.stderr
    assert sorted(log.read_text().split()) == ["0", "3", "3", "3"]
    block = json.loads((tmp_path / "o" / "hunt" / "run.json").read_text())["stop_after"]
    assert (block["events"], block["max_trials"], block["event_verdict"]) == (1, 3, "pass")
    assert block["cells"]["ok"]["skipped"] == [1, 2]
    assert block["cells"]["bad"]["stopped"] is False


def test_a_resumed_run_continues_a_cell_that_had_not_stopped(tmp_path: Path, payload):
    script, log = payload(PAYLOAD), tmp_path / "ran.log"
    out = str(tmp_path / "o")
    first = run_aorta("sweep", "run", "--recipe", str(_recipe(tmp_path)), "--output", out,
                      "--stop-after-events", "3", "--max-trials", "3", "--",
                      sys.executable, str(script), str(log))
    assert first.returncode == 0, first.stderr
    more = run_aorta("sweep", "run", "--recipe", str(_recipe(tmp_path)), "--output", out,
                     "--stop-after-events", "2", "--max-trials", "6", "--",
                     sys.executable, str(script), str(log))
    assert more.returncode == 0, more.stderr
    # bad already had 3 fails (>= 2): it stays stopped; ok runs trials 3 to 5.
    assert log.read_text().split().count("3") == 3
    assert log.read_text().split().count("0") == 6


def _result(index: int, verdict: str) -> TrialResult:
    return TrialResult(cell="c", index=index, verdict=verdict,  # type: ignore[arg-type]
                       reason="r", argv=["x"], command=["x"], env_overlay={}, env_unset=[],
                       exit_code=0 if verdict == "pass" else 1)


def test_cell_stop_counts_only_the_contiguous_prefix():
    rule = StopAfter(events=2, max_trials=5)
    assert cell_stop(rule, {}).trials_run == 0
    state = cell_stop(rule, {0: _result(0, "fail"), 2: _result(2, "fail")})
    assert (state.trials_run, state.events, state.stopped) == (1, 1, False)
    state = cell_stop(rule, {0: _result(0, "fail"), 1: _result(1, "pass"),
                             2: _result(2, "fail"), 4: _result(4, "pass")})
    assert (state.trials_run, state.stopped, state.skipped) == (3, True, [3])
    capped = cell_stop(StopAfter(events=1, max_trials=2, event_verdict="error"),
                       {0: _result(0, "pass"), 1: _result(1, "pass")})
    assert (capped.trials_run, capped.stopped) == (2, False)


def test_batches_send_each_running_cell_its_next_trial_once():
    from aorta.run.stop_after import run_with_stop_after
    from aorta.run.trial import TrialSpec

    def spec(cell: str, index: int, baseline: bool = False) -> TrialSpec:
        return TrialSpec(cell=cell, index=index, run_dir=Path("/unused"), command=("x",),
                         env={}, collectors={}, baseline=baseline)

    verdicts = {"a": ["fail", "fail", "pass", "pass"], "b": ["pass"] * 4,
                "c": ["fail", "pass", "fail", "pass"]}
    specs = [spec(c, i) for i in range(4) for c in verdicts] + [spec("b", 0, baseline=True)]
    # Resuming: b's first trial and its baseline already ran.
    done = {"cells/b/trial_0": _result(0, "pass"), "cells/b/baseline_0": _result(0, "pass")}
    batches: list[list[str]] = []

    def run_batch(batch, record):
        batches.append([s.key for s in batch])
        for s in batch:
            record(dataclasses.replace(_result(s.index, verdicts[s.cell][s.index]),
                                       cell=s.cell))

    states = run_with_stop_after(StopAfter(events=2, max_trials=4), specs, done, run_batch)
    assert batches == [["cells/a/trial_0", "cells/b/trial_1", "cells/c/trial_0"],
                       ["cells/a/trial_1", "cells/b/trial_2", "cells/c/trial_1"],
                       ["cells/b/trial_3", "cells/c/trial_2"]]
    assert {c: (s.trials_run, s.stopped, s.skipped) for c, s in states.items()} == {
        "a": (2, True, [2, 3]), "b": (4, False, []), "c": (3, True, [3])}
