"""The sweep loop: the run directory (lock, resume, provenance), every trial, and the summaries,
written whatever happens (Ctrl-C or another signal, a crash of a trial, a full disk). Files
and their places belong to `aorta.store`; this module decides what to run."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from aorta.base.errors import (EXIT_INTERRUPTED, EXIT_NONE_PASSED, EXIT_OK, DiskFullError,
                               RunDirError, doing, filesystem_error)
from aorta.base.redaction import Redactor
from aorta.base.version import VERSION as __version__
from aorta.run.executors.base import Executor, OnDone, OnStart
from aorta.run.plan import Plan
from aorta.run.progress import Progress
from aorta.run.signals import SignalGuard, stopping_signals
from aorta.run.stale import kill_stale_trials
from aorta.run.stop_after import run_with_stop_after, skipped_by_cell, stop_note, stop_states
from aorta.run.summary import CellSummary, matrix_document, perf_markdown, summarize_cell
from aorta.run.trial import TrialSpec, utc_now
from aorta.run.warden import Warden
from aorta.store.files import is_disk_full
from aorta.store.layout import ENV, MATRIX, PERF, RECIPE
from aorta.store.records import RunRecord, TrialResult
from aorta.store.run_dir import RunStore, Slot


@dataclass(frozen=True)
class SweepOutcome:
    """How one call of a sweep went; `ran` counts the trials run now, not the resumed ones."""

    run_dir: Path
    cells: list[CellSummary]
    status: str                  # complete | interrupted
    ran: int
    report: Path | None = None   # report.html, when asked for
    history: Any = None          # what the history recorded (`aorta.history.Recorded`)

    @property
    def all_passed(self) -> bool:
        return all(c.passed == c.trials - c.skipped for c in self.cells)

    @property
    def none_passed(self) -> bool:
        """Trials ran (or were complete already) and not one profiled trial passed: nothing
        was measured. Baseline (no-collector) trials do not count."""
        done = sum(c.passed + c.failed + c.errored for c in self.cells)
        return done > 0 and sum(c.passed for c in self.cells) == 0

    def exit_code(self, strict: bool = False) -> int:
        """A failing trial is data (0), but a sweep where no trial passed measured nothing and
        a CI job built on it must not be green (3, with or without `strict`); with `strict`,
        any trial that did not pass gives 3; interrupted gives 130."""
        if self.status == "interrupted":
            return EXIT_INTERRUPTED
        if self.none_passed or (strict and not self.all_passed):
            return EXIT_NONE_PASSED
        return EXIT_OK


def plan_redactor(plan: Plan, caller_env: Mapping[str, str]) -> Redactor:
    """A redactor that knows every secret among the sweep's inputs."""
    return Redactor.for_inputs([caller_env, plan.recipe.env, *(c.env for c in plan.cells)],
                               [plan.command + c.args for c in plan.cells])


def trial_specs(plan: Plan, run_dir: Path) -> list[TrialSpec]:
    """Every trial in run order. With `baseline`, each profiled trial is followed by one with
    no collector, so drift over the run affects both alike."""
    recipe = plan.recipe
    specs = []
    for cell in plan.cells:
        for index in range(plan.trials):
            spec = TrialSpec(
                cell=cell.name, index=index, run_dir=run_dir, command=plan.command + cell.args,
                env={**recipe.env, **cell.env}, collectors=plan.collectors,
                env_mode=recipe.env_passthrough_mode, timeout=recipe.timeout_per_trial,
                grace=recipe.kill_grace_s, max_log_bytes=recipe.max_log_mib << 20,
                retain={v: recipe.retain.level(v) for v in ("pass", "fail", "error")})
            specs.append(spec)
            if recipe.baseline:
                specs.append(replace(spec, collectors={}, baseline=True))
    return specs


@dataclass(frozen=True)
class Pending:
    """How many of a plan's trials a run would start now (`--dry-run`)."""

    to_run: int
    total: int
    note: str | None = None     # why everything would run, or why the run would be refused

    def line(self) -> str:
        note = f" ({self.note})" if self.note else ""
        return f"would run {self.to_run} of {self.total} trial(s){note}"


def pending_trials(plan: Plan, run_dir: Path, fresh: bool = False) -> Pending:
    """Reads the run directory, never writes or locks it."""
    specs = trial_specs(plan, run_dir)
    total = len(specs)
    store = RunStore(run_dir)
    if fresh:
        return Pending(total, total, "--fresh discards what the run directory holds"
                       if store.has_run() else None)
    if not store.has_run():
        return Pending(total, total)
    try:
        previous = store.read_run("resume")
    except RunDirError as exc:
        return Pending(total, total, f"the run would be refused: {exc}")
    if previous.fingerprint != plan.fingerprint():
        return Pending(total, total, f"the run would be refused: {run_dir} holds a run of a "
                                     f"different recipe or command; pass --fresh to replace it")
    done = sum(store.read_slot(s.cell, s.name).state == "complete" for s in specs)
    return Pending(total - done, total, f"{done} already complete" if done else None)


def run_sweep(plan: Plan, output: Path, caller_env: Mapping[str, str], progress: Progress,
              fresh: bool, executor: Executor) -> SweepOutcome:
    """Run every trial of `plan` without a complete result under `output`/<run>, on `executor`.
    Raises `DiskFullError` when the disk fills up, KeyboardInterrupt on Ctrl-C and
    `Interrupted` on another stopping signal (run/signals.py): the run is marked interrupted,
    what finished is kept, and the same command resumes it."""
    store = RunStore.in_output(output, plan.run_name, plan_redactor(plan, caller_env))
    with doing("creating the run directory", "--output"):
        store.create()
    try:
        with stopping_signals() as signals, store.lock():
            try:
                return _Sweep(plan, store, caller_env, progress, executor, signals).run(fresh)
            finally:
                store.free_reserve()
    except OSError as exc:
        if is_disk_full(exc):
            raise DiskFullError.at(f"while writing under {store.root}"
                                   f"{f' ({exc.filename})' if exc.filename else ''}",
                                   str(exc.strerror).lower()) from None
        raise filesystem_error(exc, "writing the run", "--output") or exc


class _Sweep:
    def __init__(self, plan: Plan, store: RunStore, caller_env: Mapping[str, str],
                 progress: Progress, executor: Executor, signals: SignalGuard) -> None:
        self.plan, self.store, self.caller_env = plan, store, caller_env
        self.progress, self.executor, self.signals = progress, executor, signals

    def run(self, fresh: bool) -> SweepOutcome:
        import yaml

        from aorta.host.snapshot import snapshot

        store, plan = self.store, self.plan
        store.keep_reserve()
        killed = kill_stale_trials(store, store.cells_on_disk())
        if killed:
            self.progress.note(f"killed {killed} process(es) left running by an earlier, "
                               f"interrupted run of this directory")
        previous = self._previous(fresh)
        specs = trial_specs(plan, store.root)
        slots = {s.dir: s for s in store.slots(self._planned_record(previous), tables=False)}
        newer = [s for s in slots.values() if s.state == "newer"]
        if newer:
            raise RunDirError(f"{store.root / newer[0].dir / 'result.json'}: {newer[0].problem}; "
                              f"{len(newer)} such record(s) in this run; they are left as they "
                              f"are: upgrade aorta to resume the run, or use another --output")
        todo = [s for s in specs if slots[s.key].state != "complete"]
        # Before run.json says running, which only a finishing run may take back.
        store.write_text(RECIPE, yaml.safe_dump(plan.resolved_recipe(), sort_keys=False))
        if store.read_json(ENV) is None:
            store.write_json(ENV, snapshot(self.caller_env))
        run = self._claim(previous, len(todo))
        corrupt = [k for k, s in slots.items() if s.state == "corrupt"]
        if corrupt:
            self.progress.note(f"{len(corrupt)} trial record(s) were corrupt: each is moved "
                               f"to quarantine/ and its trial runs again")
        return self._execute(run, specs, todo, slots)

    def _previous(self, fresh: bool) -> RunRecord | None:
        store = self.store
        if fresh:
            try:
                previous = store.read_run("replace") if store.has_run() else None
            except RunDirError:
                previous = None   # --fresh replaces an unreadable run.json too
            store.discard()
            return _discarded(previous)
        previous = store.read_run("resume") if store.has_run() else None
        if previous is not None and previous.fingerprint != self.plan.fingerprint():
            raise RunDirError(
                f"{store.root}: holds a run of a different recipe or command (recipe "
                f"{previous.recipe}, command {' '.join(previous.command)!r}); pass --fresh to "
                f"replace it, or choose another --output or ticket")
        if previous is None and store.cells_on_disk():
            raise RunDirError(f"{store.root}: has trial results but no run.json, so aorta "
                              f"cannot tell what produced them; pass --fresh to replace them "
                              f"or use another --output")
        return previous

    def _planned_record(self, previous: RunRecord | None) -> RunRecord:
        plan = self.plan
        return RunRecord(
            run=plan.run_name, fingerprint=plan.fingerprint(),
            command=self.store.redactor.argv(plan.command), collectors=list(plan.collectors),
            cells=[c.name for c in plan.cells], trials_per_cell=plan.trials,
            baseline=plan.recipe.baseline, status="running", aorta_version=__version__,
            recipe=str(plan.source) if plan.source else None, recipe_sha256=plan.source_sha256,
            cwd=os.getcwd(),
            created_at=previous.created_at if previous and previous.created_at else utc_now(),
            started_at=previous.started_at if previous else None,
            finished_at=previous.finished_at if previous else None,
            history=list(previous.history) if previous else [],
            executor=previous.executor if previous else None)

    def _claim(self, previous: RunRecord | None, to_run: int) -> RunRecord:
        """Write run.json as running. A rerun with nothing left to run keeps the run's own
        start and finish times; its visit is in the history."""
        now = utc_now()
        run = self._planned_record(previous)
        run = replace(run, started_at=now if to_run or run.started_at is None else run.started_at,
                      history=run.history + [{"started_at": now, "trials_to_run": to_run}])
        self.store.write_run(run)
        return run

    def _execute(self, run: RunRecord, specs: list[TrialSpec], todo: list[TrialSpec],
                 before: dict[str, Slot]) -> SweepOutcome:
        store = self.store
        self.progress.start(len(specs), len(specs) - len(todo))
        ran = 0

        def started(spec: TrialSpec) -> None:
            self.progress.trial_started(spec.cell, spec.index, spec.baseline)

        def done(result: TrialResult) -> None:
            nonlocal ran
            ran += 1
            self.progress.trial_done(result)

        blocks: list[dict[str, Any]] = []

        def save(block: dict[str, Any]) -> None:     # the executor's state, in run.json
            blocks.append(block)
            store.write_run(replace(run, executor=block))

        self.executor.attach(store.root, run.executor, save)
        status = "interrupted"
        stopping = self.plan.recipe.stop_after is not None
        warden = Warden.start() if stopping or todo else None
        try:
            with self.signals.armed():
                if warden is not None and stopping:
                    self._run_stopping(run, specs, started, done, warden)
                elif warden is not None:
                    self.executor.launch(todo, self.caller_env, started, done, warden)
            status = "complete"
        except BaseException:
            self.executor.cancel()
            raise
        finally:
            unchecked = warden.close() if warden is not None else None
            if unchecked:
                self.progress.note(unchecked)
            self.progress.close()
            if blocks:
                run = replace(run, executor=blocks[-1])
            cells = self._finish(run, specs, status, before, todo, unchecked)
        return SweepOutcome(store.root, cells, status, ran)

    def _run_stopping(self, run: RunRecord, specs: list[TrialSpec], started: OnStart,
                      done: OnDone, warden: Warden) -> None:
        assert self.plan.recipe.stop_after is not None
        before = {s.dir: s.result for s in self.store.slots(run, tables=False)
                  if s.result is not None}

        def run_batch(batch: list[TrialSpec], record: OnDone) -> None:
            def finished(result: TrialResult) -> None:
                record(result)
                done(result)

            self.executor.launch(batch, self.caller_env, started, finished, warden)

        run_with_stop_after(self.plan.recipe.stop_after, specs, before, run_batch)

    def _finish(self, run: RunRecord, specs: list[TrialSpec], status: str,
                before: dict[str, Slot], todo: list[TrialSpec], unchecked: str | None = None
                ) -> list[CellSummary]:
        """run.json first (it says how the run stands), then the summaries. The reserve is
        given back first, so that on a full disk run.json can still say `interrupted`. Only
        `todo` is read again: the rest (`before`) was complete then, under this run's lock."""
        store, plan = self.store, self.plan
        again = {s.key for s in todo}
        store.free_reserve()
        finished = utc_now() if todo or run.finished_at is None else run.finished_at
        history = [*run.history[:-1], {**run.history[-1], "finished_at": utc_now(),
                                       "status": status}]
        if unchecked:      # the warden's last check could not vouch for every process
            history[-1]["leftovers"] = unchecked
        by_cell: dict[str, list[TrialResult]] = {c.name: [] for c in plan.cells}
        for key, slot in before.items():
            if key in again:
                slot = store.read_slot(slot.cell, slot.name, tables=False)
            if slot.result is not None and slot.cell in by_cell:
                by_cell[slot.cell].append(slot.result)
        stops = stop_states(plan.recipe.stop_after, by_cell)
        run = replace(run, status=status, finished_at=finished, history=history, stop_after=stops)
        store.write_run(run)
        skipped = skipped_by_cell(stops)
        cells = [summarize_cell(c.name, plan.trials, by_cell[c.name], list(plan.collectors),
                                skipped=len(skipped.get(c.name, ())),
                                stop_note=stop_note(stops, c.name)) for c in plan.cells]
        try:
            store.write_json(MATRIX, matrix_document(run.to_json(), cells))
            store.write_text(PERF, perf_markdown(f"aorta run {plan.run_name}", run.to_json(),
                                                 cells))
        except OSError as exc:
            if not is_disk_full(exc):
                raise
        return cells


def _discarded(previous: RunRecord | None) -> RunRecord | None:
    """After --fresh only the executor's record survives, marked discarded: what it launched
    (live Slurm jobs) measures what the user threw away, and is stopped first."""
    if previous is None or previous.executor is None:
        return None
    return replace(previous, created_at=None, started_at=None, finished_at=None, history=[],
                   executor={**previous.executor, "discarded": True})
