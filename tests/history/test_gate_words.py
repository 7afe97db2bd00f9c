"""Issue 25: `--fail-on` has one meaning. compare and history gate the same two levels the same
way for each word: `slower` watches times, rates and kernels but not a size; a size fails
only when named."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from aorta.cli import main
from history_helpers import trial, write_run

WORDS = ("slower", "kernels", "wall_s", "cpu_user_s", "max_rss_mib", "slower,max_rss_mib")


def _runs(root: Path, wall: float, rss: float) -> list[Path]:
    """Four runs at wall 1 s and 100 MiB, then four at `wall` and `rss`, five trials each."""
    runs = []
    for position in range(8):
        step = position >= 4
        results = [replace(trial("c1", i, (wall if step else 1.0) * (1 + 0.01 * (i % 3 - 1))),
                           max_rss_mib=(rss if step else 100.0) + i) for i in range(5)]
        runs.append(write_run(root, f"run{position}", f"2026-01-01T0{position}:00:00+00:00",
                              {"c1": results}))
    return runs


@pytest.mark.parametrize("wall, rss, failing", [
    (1.0, 200.0, {"max_rss_mib", "slower,max_rss_mib"}),       # memory doubled, time the same
    (1.5, 100.0, {"slower", "wall_s", "cpu_user_s", "slower,max_rss_mib"}),
])
def test_compare_and_history_gate_alike(tmp_path: Path, capsys, wall, rss, failing):
    runs = _runs(tmp_path / "runs", wall, rss)
    db = str(tmp_path / "history.sqlite")
    assert main(["history", "add", *map(str, runs), "--db", db]) == 0
    for word in WORDS:
        compared = main(["compare", str(runs[3]), str(runs[4]), "--fail-on", word])
        shown = main(["history", "show", "--db", db, "--recent", "0", "--fail-on", word])
        reported = main(["history", "report", "--db", db, "--recent", "0", "--fail-on", word,
                         "--output", str(tmp_path / "h.html")])
        expected = 4 if word in failing else 0
        assert (compared, shown, reported) == (expected,) * 3, word
        if not expected:    # the page's line says the gate passed, beside its regressions
            assert f"failing --fail-on {word}: 0" in capsys.readouterr().out
