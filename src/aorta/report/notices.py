"""What a reader must see before trusting the numbers: failures with their stderr, capture
problems, unreliable cells, missing trials, and trial warnings. Payload text keeps everything
but terminal control codes; the renderers escape it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from aorta.report.model import CellReport, Failure, Notice
from aorta.run.stderr_line import TAIL_BYTES, telling_stream
from aorta.store.reading import read_tail
from aorta.store.records import TrialResult
from aorta.store.run_dir import RunStore, Slot

# Terminal colour and cursor codes, then every other control character but tab and newline.
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(\x07|\x1b\\)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_text(text: str) -> str:
    """Payload output without terminal control codes (colours, cursor moves, NULs)."""
    return _CONTROL.sub("", _ANSI.sub("", text))


def failures(store: RunStore, slots: Sequence[Slot], collectors: list[str]) -> list[Failure]:
    """One record per distinct ending (verdict, reason, output tails) of a cell's trials."""
    groups: dict[tuple[str, str, str | None, str | None], list[Slot]] = {}
    for slot in slots:
        if slot.result is not None and slot.result.verdict != "pass":
            key = (slot.result.verdict, clean_text(slot.result.reason),
                   *_output_tails(store.root / slot.dir, slot.result))
            groups.setdefault(key, []).append(slot)
    out = []
    for (verdict, reason, tail, stdout), (first, *others) in groups.items():
        result = first.result
        assert result is not None
        out.append(Failure(
            cell=first.cell, name=first.name, verdict=verdict, reason=reason,
            exit_code=result.exit_code, signal=result.signal, timed_out=result.timed_out,
            stderr_tail=tail, stdout_tail=stdout, captures=bad_captures(result, collectors),
            files=store.trial_files(first, collectors), repeats=[s.name for s in others]))
    return out


def _output_tails(trial_dir: Path, result: TrialResult) -> tuple[str | None, str | None]:
    """The end of stderr, and the end of stdout when only stdout has a line that says why."""
    stderr = result.stderr_tail if result.stderr_tail is not None \
        else read_tail(trial_dir / "stderr.log", TAIL_BYTES)
    stdout = read_tail(trial_dir / "stdout.log", TAIL_BYTES) \
        if telling_stream(trial_dir, stderr)[0] == "stdout" else None
    return (clean_text(stderr) if stderr is not None else None,
            clean_text(stdout) if stdout is not None else None)


def bad_captures(result: TrialResult, collectors: list[str]) -> dict[str, str]:
    """Collector -> "state: reason" for every capture that is not ok."""
    shown = {c: result.captures[c] for c in collectors if c in result.captures}
    return {c: clean_text(f"{cap.state}: {cap.reason}" if cap.reason else cap.state)
            for c, cap in shown.items() if cap.state != "ok"}


def cell_notices(cell: CellReport, slots: Sequence[Slot], collectors: list[str]
                 ) -> list[Notice]:
    notices = []
    if cell.unreliable:
        finished = cell.passed + cell.failed + cell.errored
        notices.append(Notice("unreliable", f"{cell.errored} of {finished} finished trial(s) "
                              f"errored (10% or more): this cell's numbers need a second look",
                              cell.name))
    absent = [s.name for s in slots if s.result is None]
    if absent:
        notices.append(Notice("missing", f"{len(absent)} of {len(slots)} planned trial(s) "
                              f"have no result: {name_list(absent)}", cell.name))
    notices += [Notice("corrupt", f"{slot.name}/result.json is not a valid record "
                       f"({clean_text(slot.problem or '')}); it counts as missing, and the "
                       f"same sweep command runs the trial again", cell.name)
                for slot in slots if slot.state in ("corrupt", "newer")]
    done = [(s.name, s.result) for s in slots if s.result is not None]
    # Capture problems of passing trials only: a failed trial's are shown with its failure.
    captures = _names_by_text((f"{c} capture {why}", name) for name, r in done
                              if r.verdict == "pass"
                              for c, why in bad_captures(r, collectors).items())
    warnings = _names_by_text((clean_text(str(w)), name) for name, r in done for w in r.warnings)
    for kind, grouped in (("capture", captures), ("trial", warnings)):
        notices += [Notice(kind, f"{text} ({name_list(names)})", cell.name)
                    for text, names in grouped.items()]
    return notices


def _names_by_text(pairs: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for text, name in pairs:
        grouped.setdefault(text, []).append(name)
    return grouped


def run_notices(status: str, cells: list[CellReport], has_matrix: bool) -> list[Notice]:
    from aorta.run.gpu_notes import gpu_state_notes

    notices = [Notice("gpu", note) for note in gpu_state_notes(
        {c.name: {k: m.median for k, m in c.metrics.items() if k.startswith("telemetry_")}
         for c in cells})]
    if status != "complete":
        missing = sum(1 for c in cells for t in c.trials if t.verdict == "missing")
        notices.append(Notice("run", f"the run is {status}: {missing} of "
                                     f"{sum(len(c.trials) for c in cells)} planned trial(s) "
                                     f"have no result; rerun the same sweep command to finish it"))
    if not has_matrix:
        notices.append(Notice("run", "matrix.json is missing or unreadable; the figures here "
                                     "come from the trial results"))
    return notices


def name_list(names: list[str], limit: int = 8) -> str:
    """`trial_0, trial_2` (and how many more past `limit`)."""
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return ", ".join(names[:limit]) + more
