"""Where a run directory keeps its files (docs/sweep.md, "Output layout"; the lock, the reserve
and `.running.json`: docs/reliability.md), and the reads that need no record type. Every read
validates: a run's record is its checked fields or a `RunDirError` saying why not; a trial's
is `complete`, `missing`, `corrupt` (with why) or `newer`, never an exception. `aorta sweep
status` reads through here alone, so that it starts light; `aorta.store.run_dir.RunStore`
builds the record types from the same fields.
"""

from __future__ import annotations

import os
from typing import Any, Literal

from aorta.base.errors import RunDirError
from aorta.base.names import name_problem
from aorta.store.lock import held_by_live_run
from aorta.store.reading import RecordError, read_json_file, read_text_file
from aorta.store.record_checks import NewerRecord, checked_run, checked_trial

PathLike = str | os.PathLike[str]

RUN_JSON, RECIPE, ENV, MATRIX, PERF = ("run.json", "recipe.resolved.yaml", "env.json",
                                       "matrix.json", "perf.md")
RESULT, RUNNING, RERUN = "result.json", ".running.json", "rerun.sh"
CELLS, QUARANTINE, RESERVE = "cells", "quarantine", ".aorta.reserve"
TRIAL_FILES = (RESULT, "stdout.log", "stderr.log", RERUN)

SlotState = Literal["complete", "missing", "corrupt", "newer"]


def trial_name(index: int, baseline: bool = False) -> str:
    return f"{'baseline' if baseline else 'trial'}_{index}"


def trial_log(cell: str, name: str, stream: str = "stderr") -> str:
    return f"{CELLS}/{cell}/{name}/{stream}.log"


def parse_trial_name(name: str) -> tuple[int, bool] | None:
    """`trial_3` -> (3, False); `baseline_3` -> (3, True); anything else -> None. The index
    is one to five decimal digits (Unicode's, as `int` reads them)."""
    kind, _, digits = name.partition("_")
    if kind not in ("trial", "baseline") or not 1 <= len(digits) <= 5 or not digits.isdecimal():
        return None
    return int(digits), kind == "baseline"


def read_run_fields(root: PathLike, action: str = "read") -> dict[str, Any]:
    """The run's checked fields; `RunDirError` saying why it cannot be used to `action` it."""
    if not os.path.isdir(root):
        what = "not a directory" if os.path.exists(root) else "no such directory"
        raise RunDirError(f"{root}: {what}; give a run directory (<output>/<run>, "
                          f"printed by the sweep as 'results:')")
    path = os.path.join(root, RUN_JSON)
    if not os.path.isfile(path):
        inside = sorted(n for n in _subdirs(root, follow_links=True)   # the runs of an --output
                        if os.path.exists(os.path.join(root, n, RUN_JSON)))[:5]
        hint = f"; runs inside it: {', '.join(inside)}" if inside else ""
        raise RunDirError(f"{root}: not an aorta run directory (no {RUN_JSON}){hint}")
    try:
        fields = checked_run(read_json_file(path), lambda: _baseline_of_v1(root))
    except NewerRecord as exc:
        raise RunDirError(f"{path}: {exc}; to {action} it") from None
    except (OSError, RecordError) as exc:
        raise RunDirError(f"{path}: not an aorta run record, or unreadable ({exc})") from None
    if fields["status"] == "running" and not held_by_live_run(root):
        fields["status"] = "interrupted"     # its driver is gone (SIGKILL, a crash, a reboot)
    return fields


def _baseline_of_v1(root: PathLike) -> bool:
    import yaml

    try:
        recipe = yaml.safe_load(read_text_file(os.path.join(root, RECIPE), 1 << 20))
    except (OSError, RecordError, yaml.YAMLError):
        return False
    return isinstance(recipe, dict) and recipe.get("baseline") is True


def read_trial(root: PathLike, cell: str, name: str
               ) -> tuple[SlotState, dict[str, Any] | None, str | None]:
    """(state, checked fields if complete, why if corrupt or newer) of `cells/<cell>/<name>`."""
    parsed = parse_trial_name(name)
    if parsed is None:
        raise ValueError(f"{name!r} is not a trial directory name")
    try:
        fields = checked_trial(read_json_file(os.path.join(root, CELLS, cell, name, RESULT)))
    except (FileNotFoundError, NotADirectoryError):
        return "missing", None, None
    except NewerRecord as exc:
        return "newer", None, str(exc)
    except (OSError, RecordError) as exc:
        return "corrupt", None, str(exc)
    if (fields["cell"], fields["index"], fields["baseline"]) != (cell, *parsed):
        recorded = trial_name(fields["index"], fields["baseline"])
        return "corrupt", None, (f"it records {fields['cell']}/{recorded} but lies in "
                                 f"{CELLS}/{cell}/{name}")
    return "complete", fields, None


def slot_names(root: PathLike, cell: str, trials_per_cell: int, baseline: bool) -> list[str]:
    """A cell's trials: the planned ones and any other trial directory found on disk, the
    profiled trials before the baseline ones, each in index order."""
    names = {trial_name(i, b) for i in range(trials_per_cell)
             for b in ((False, True) if baseline else (False,))}
    names |= set(trial_dirs_on_disk(root, cell))
    return sorted(names, key=lambda n: (parse_trial_name(n) or (0, False))[::-1])


def trial_dirs_on_disk(root: PathLike, cell: str) -> list[str]:
    return [n for n in _subdirs(os.path.join(root, CELLS, cell)) if parse_trial_name(n)]


def cells_on_disk(root: PathLike) -> list[str]:
    return sorted(n for n in _subdirs(os.path.join(root, CELLS)) if name_problem(n) is None)


def _subdirs(path: PathLike, follow_links: bool = False) -> list[str]:
    """Directory names in `path` (links to one only with `follow_links`); [] if unreadable."""
    try:
        return [e.name for e in os.scandir(path) if e.is_dir(follow_symlinks=follow_links)]
    except OSError:
        return []
