"""A run directory: reading its records as record types, and every write to it, through
`store.files` (atomic, confined) and the run's `Redactor`, so no credential reaches disk.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aorta.base.errors import RunDirError
from aorta.base.names import component_problem, printable
from aorta.base.redaction import PATTERN_ONLY, Redactor
from aorta.store.files import json_text, open_dir, remove_tree, write_bytes
from aorta.store.files import write_text as write_confined
from aorta.store.layout import (CELLS, ENV, MATRIX, PERF, QUARANTINE, RESERVE, RESULT, RUN_JSON,
                                RUNNING, TRIAL_FILES, SlotState, cells_on_disk, parse_trial_name,
                                read_run_fields, read_trial, slot_names, trial_dirs_on_disk)
from aorta.store.lock import RunLock
from aorta.store.reading import MAX_RECORD_BYTES, RecordError, read_json_file, read_text_file
from aorta.store.records import RunRecord, TrialResult, trial_result

RESERVE_BYTES = 1 << 20


@dataclass(frozen=True)
class Slot:
    """One trial's place in the run and what its record holds."""

    cell: str
    name: str                    # trial_<i> or baseline_<i>
    index: int
    baseline: bool
    state: SlotState
    result: TrialResult | None = None
    problem: str | None = None   # why the record is corrupt or newer

    @property
    def dir(self) -> str:
        return f"{CELLS}/{self.cell}/{self.name}"


class RunStore:
    """One run directory. `redactor` scrubs everything written through it."""

    def __init__(self, root: Path, redactor: Redactor = PATTERN_ONLY) -> None:
        self.root = root
        self.redactor = redactor

    @classmethod
    def in_output(cls, output: Path, run_name: str, redactor: Redactor = PATTERN_ONLY
                  ) -> RunStore:
        problem = component_problem(run_name)
        if problem:
            raise RunDirError(f"run name {printable(run_name)} cannot name a directory: {problem}")
        return cls(output / run_name, redactor)

    def trial_dir(self, cell: str, name: str) -> Path:
        return self.root / CELLS / cell / name

    def path(self, *parts: str) -> Path:
        return self.root.joinpath(*parts)

    def create(self) -> None:
        """Make the run directory (and --output) if needed; refuse a link in its place."""
        self.root.parent.mkdir(parents=True, exist_ok=True)
        with suppress(FileExistsError):
            os.mkdir(self.root, 0o777)
        with open_dir(self.root, ()):
            pass   # refuses a symbolic link or a file at <output>/<run>

    def lock(self) -> RunLock:
        return RunLock(self.root)

    def has_run(self) -> bool:
        return os.path.lexists(self.path(RUN_JSON))

    def read_run(self, action: str = "read") -> RunRecord:
        """The run's record; `RunDirError` saying why it cannot be used to `action` the run."""
        return RunRecord(**read_run_fields(self.root, action))

    def write_run(self, record: RunRecord) -> None:
        self.write_json(RUN_JSON, record.to_json())

    def read_slot(self, cell: str, name: str, tables: bool = True) -> Slot:
        """A trial's slot; without `tables` its record keeps no list or object metric."""
        state, fields, problem = read_trial(self.root, cell, name)   # refuses a bad name
        if fields is not None and not tables:
            fields["metrics"] = {k: v for k, v in fields["metrics"].items()
                                 if not isinstance(v, (list, dict))}
        result = None if fields is None else trial_result(fields)
        index, baseline = parse_trial_name(name) or (0, False)
        return Slot(cell, name, index, baseline, state, result, problem)

    def slots(self, run: RunRecord, cells: Iterable[str] | None = None, tables: bool = True
              ) -> list[Slot]:
        """Every trial of the run, in cell order, each cell's as `slot_names` orders them."""
        return [self.read_slot(cell, name, tables)
                for cell in (run.cells if cells is None else cells)
                for name in slot_names(self.root, cell, run.trials_per_cell, run.baseline)]

    def trial_files(self, slot: Slot, collectors: Iterable[str]) -> dict[str, str]:
        """Label -> path (relative to the run directory) of the trial's files that exist."""
        base = self.path(slot.dir)
        files = {name: f"{slot.dir}/{name}" for name in TRIAL_FILES if (base / name).is_file()}
        files.update({f"{c}/": f"{slot.dir}/{c}/" for c in collectors if (base / c).is_dir()})
        return files

    def cells_on_disk(self) -> list[str]:
        return cells_on_disk(self.root)

    def write_trial(self, result: TrialResult) -> None:
        """`result.json`, written last: its presence marks the trial complete."""
        self.write_json(RESULT, result.to_json(), (CELLS, result.cell, result.name))

    def write_trial_file(self, cell: str, name: str, filename: str, text: str,
                         executable: bool = False, private: bool = False) -> None:
        """Write a file into the trial directory, redacted; `private`: readable by the owner
        only, from its creation on."""
        write_confined(self.root, (CELLS, cell, name), filename, self.redactor.text(text),
                       executable, private)

    def forget_result(self, cell: str, name: str) -> None:
        """Remove a trial's record so that the trial counts as not run (a Slurm job stopped
        mid-trial: its verdict would be Slurm's doing, not the payload's)."""
        self._unlink((CELLS, cell, name), RESULT)

    def fresh_trial_dir(self, cell: str, name: str, subdirs: Sequence[str] = ()) -> Path:
        """An empty trial directory (with empty `subdirs`), so a rerun never reads stale
        files. A corrupt record is moved to quarantine first; a newer one is refused."""
        state, _, problem = read_trial(self.root, cell, name)
        if state == "newer":
            raise RunDirError(f"{self.trial_dir(cell, name) / RESULT}: {problem}; it is left "
                              f"as it is")
        if state == "corrupt":
            self.quarantine(cell, name)
        remove_tree(self.root, (CELLS, cell, name))
        with open_dir(self.root, (CELLS, cell, name), create=True) as fd:
            for sub in subdirs:
                os.mkdir(sub, 0o777, dir_fd=fd)
        return self.trial_dir(cell, name)

    def quarantine(self, cell: str, name: str) -> Path:
        """Move a trial directory to `quarantine/<cell>/<name>.<n>/`, keeping what it held."""
        with open_dir(self.root, (CELLS, cell)) as src, \
                open_dir(self.root, (QUARANTINE, cell), create=True) as dst:
            for n in range(1, 10_000):
                target = f"{name}.{n}"
                try:
                    os.stat(target, dir_fd=dst, follow_symlinks=False)
                except FileNotFoundError:
                    os.rename(name, target, src_dir_fd=src, dst_dir_fd=dst)
                    return self.path(QUARANTINE, cell, target)
        raise RunDirError(f"{self.path(QUARANTINE, cell)}: too many quarantined copies of {name}")

    def mark_running(self, cell: str, name: str, info: dict[str, Any]) -> None:
        """Who runs the payload now: a later driver finds what a crash left (`running_marks`)."""
        write_confined(self.root, (CELLS, cell, name), RUNNING, json_text(info))

    def clear_running(self, cell: str, name: str) -> None:
        self._unlink((CELLS, cell, name), RUNNING)

    def _unlink(self, parts: Sequence[str], name: str) -> None:
        with suppress(FileNotFoundError), open_dir(self.root, parts) as fd:
            os.unlink(name, dir_fd=fd)

    def running_marks(self, cells: Iterable[str]) -> list[tuple[str, str, dict[str, Any]]]:
        """(cell, trial, mark) for every trial that a driver left marked as running."""
        marks = ((cell, name, self.read_json(RUNNING, (CELLS, cell, name), 1 << 16))
                 for cell in cells for name in trial_dirs_on_disk(self.root, cell))
        return [(cell, name, mark) for cell, name, mark in marks if isinstance(mark, dict)]

    def write_json(self, name: str, doc: Any, parts: Sequence[str] = ()) -> None:
        write_confined(self.root, parts, name, json_text(self.redactor.doc(doc)))

    def write_text(self, name: str, text: str, parts: Sequence[str] = (),
                   executable: bool = False) -> None:
        write_confined(self.root, parts, name, self.redactor.text(text), executable)

    def write_file(self, name: str, data: bytes, parts: Sequence[str] = ()) -> None:
        """A derived file (an export of the run's own records, already redacted)."""
        write_bytes(self.root, parts, name, data)

    def read_json(self, name: str, parts: Sequence[str] = (), limit: int = MAX_RECORD_BYTES
                  ) -> Any:
        """A JSON file of the run, or None when it is missing, unreadable or invalid."""
        try:
            return read_json_file(self.path(*parts, name), limit)
        except (OSError, RecordError):
            return None

    def read_text(self, name: str, limit: int = 1 << 20) -> str | None:
        try:
            return read_text_file(self.path(name), limit)
        except (OSError, RecordError):
            return None

    def discard(self) -> None:
        """Forget every result (`--fresh`); the lock, the reserve and Slurm's folder stay."""
        for name in (CELLS, MATRIX, PERF, ENV, RUN_JSON):
            remove_tree(self.root, (name,))

    def keep_reserve(self) -> None:
        """Keep `RESERVE_BYTES` on the run's filesystem that `free_reserve` can give back, so
        that a run stopped by a full disk can still record that it was interrupted. Raises
        `ENOSPC` where there is not that much: such a run does not start."""
        self.free_reserve()   # one left by a killed run
        write_confined(self.root, (), RESERVE, "\0" * RESERVE_BYTES)

    def free_reserve(self) -> None:
        with suppress(FileNotFoundError):
            os.unlink(self.path(RESERVE))
