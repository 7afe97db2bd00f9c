"""Several processes recording into one history at once: every run lands, none fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from aorta.history.db import open_history
from aorta.history.store import Filters, load_history
from history_helpers import series_runs

SRC = Path(__file__).resolve().parents[2] / "src"
WRITERS, RUNS_EACH = 4, 5


def test_concurrent_writers(db_url: str, tmp_path: Path) -> None:
    runs = series_runs(tmp_path, [1.0 + i / 100 for i in range(WRITERS * RUNS_EACH)])
    script = ("import sys\nfrom aorta.history import record_run\n"
              "for path in sys.argv[2:]:\n    record_run(path, sys.argv[1])\n")
    # The schema is created by the first writer that gets there: none is made beforehand.
    procs = [subprocess.Popen([sys.executable, "-c", script, db_url,
                               *map(str, runs[w::WRITERS])],
                              env={"PYTHONPATH": str(SRC), "PATH": "/usr/bin:/bin"},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for w in range(WRITERS)]
    for proc in procs:
        _, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, err
    with open_history(db_url) as db:
        (series,) = load_history(db, Filters(metric="wall_s"))[0]
    assert len(series.points) == WRITERS * RUNS_EACH
