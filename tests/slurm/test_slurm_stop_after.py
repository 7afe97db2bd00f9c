"""Issue 14: stop_after, retain and env_passthrough_mode: file also hold when every trial is
a Slurm job (one array per round: the next trial of each cell that has not stopped)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from aorta_testing import run_aorta, trial_result, write_recipe

pytestmark = [pytest.mark.slurm, pytest.mark.usefixtures("slurm")]

PAYLOAD = """
import os, sys
assert os.path.isfile(os.environ["AORTA_ENV_FILE"])
open(os.path.join(os.path.dirname(os.environ["AORTA_ENV_FILE"]), "big.trace"), "w").write("x")
sys.exit(int(sys.argv[1]))
"""


def test_stop_after_and_retain_under_slurm(tmp_path: Path, payload):
    script = payload(PAYLOAD)
    recipe = write_recipe(tmp_path, """
        schema_version: 1
        ticket: hunt
        env_passthrough_mode: file
        retain: {on_pass: log}
        stop_after: {events: 1, max_trials: 3}
        axes: {exit: {ok: {args: ["0"]}, bad: {args: ["3"]}}}
        executor: {kind: slurm}
    """)
    proc = run_aorta("sweep", "run", "--recipe", str(recipe), "--output", str(tmp_path / "o"),
                     "--", sys.executable, str(script), timeout=300)
    assert proc.returncode == 0, proc.stderr
    run_dir = tmp_path / "o" / "hunt"
    block = json.loads((run_dir / "run.json").read_text())["stop_after"]
    assert block["cells"]["bad"] == {"trials_run": 1, "events": 1, "stopped": True,
                                     "skipped": [1, 2]}
    assert block["cells"]["ok"]["trials_run"] == 3
    assert sorted(p.name for p in (run_dir / "cells" / "bad").iterdir()) == ["trial_0"]
    ok = trial_result(run_dir, "ok", 0)
    assert ok["verdict"] == "pass" and ok["retention"]["files"] == ["big.trace"]
    assert (run_dir / "cells" / "bad" / "trial_0" / "big.trace").exists()
