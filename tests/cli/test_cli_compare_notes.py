"""`aorta compare`: the warnings printed before the verdicts."""

from __future__ import annotations

from pathlib import Path

from aorta.cli.compare import _load_notes
from aorta.comparison.load import LoadedRun, RunRef


def _run(partial: int) -> LoadedRun:
    return LoadedRun(RunRef(Path("run")), {}, partial)


def test_partial_captures_are_named_with_what_happens_to_their_figures() -> None:
    assert _load_notes(_run(2), _run(1), allow_partial=False) == [
        "3 passing trial(s) have a partial capture (records were skipped while reading); "
        "their collector figures are left out; --allow-partial counts them"]
    assert _load_notes(_run(2), _run(0), allow_partial=True)[0].endswith(
        "their collector figures are counted (--allow-partial)")


def test_no_partial_capture_and_no_telemetry_gives_no_note() -> None:
    assert _load_notes(_run(0), _run(0), allow_partial=False) == []
