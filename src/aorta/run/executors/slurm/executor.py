"""The Slurm executor: each trial is a task of a Slurm job array (`sbatch --array`, whose `%N`
keeps `max_parallel` even while no driver watches), run on a node by
`aorta.run.executors.slurm.worker`; the driver submits, watches and records. What lands where,
and run.json's `executor` block: docs/slurm.md. The run directory must be on a filesystem the
nodes share, and the nodes must run the driver's Python with this aorta importable.
"""

from __future__ import annotations

import getpass
import hashlib
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from aorta.base.errors import SetupError
from aorta.collectors.base import Launch
from aorta.run.executors.base import Executor, ExecutorOptions, OnDone, OnStart, Save, TrialState
from aorta.run.executors.slurm.commands import (JobState, SlurmError, cancel_jobs, missing_command,
                                                query_jobs, sbatch, wait_gone)
from aorta.run.executors.slurm.lost import describe_end, lost_result
from aorta.run.executors.slurm.options import SlurmOptions
from aorta.run.executors.slurm.script import job_options, job_script, setup_files
from aorta.run.executors.slurm.worker import write_manifest
from aorta.run.plan import Plan
from aorta.run.trial import TrialSpec, utc_now
from aorta.run.warden import Warden
from aorta.store.records import TrialResult
from aorta.store.run_dir import RunStore

#: Slurm's default MaxArraySize is 1001 (task ids 0-1000): larger sweeps go in several arrays.
MAX_ARRAY_TASKS = 1000


def job_name(run_dir: Path) -> str:
    """The name every job of this run directory carries, so all of them can be found."""
    digest = hashlib.sha256(str(run_dir.resolve()).encode()).hexdigest()[:8]
    return f"aorta-{run_dir.name}-{digest}"


def sbatch_options(config: SlurmOptions, name: str, logs: Path, tasks: int,
                   cwd: Path, after: str | None = None) -> list[str]:
    """The sbatch argv for one array of `tasks` trials, after the array `after` (so that
    max_parallel holds across arrays)."""
    throttle = f"%{config.max_parallel}" if config.max_parallel else ""
    return job_options(config, name, logs, "%A_%a", cwd, f"0-{tasks - 1}{throttle}", after)


def batch_script(python: str, manifest: Path, run_name: str, setup: Sequence[str] = ()) -> str:
    comment = [f"aorta sweep {run_name}: Slurm runs this once per array task; the worker takes",
               "the trial at index $SLURM_ARRAY_TASK_ID of the manifest."]
    return job_script(comment, setup, [python, "-m", "aorta.run.executors.slurm.worker", str(manifest)])


def _note_on_stderr(line: str) -> None:
    # Looked up at each call: a live progress bar redirects sys.stderr above itself.
    print(f"aorta: {line}", file=sys.stderr, flush=True)


class SlurmExecutor(Executor):
    """Runs each trial as a Slurm job and waits for its `result.json`. `poll_s`: the first and
    longest pause between looks at the queue (s), growing while nothing changes; `settle_s`: how
    long a job may be gone before its missing result is believed (shared filesystems lag)."""

    kind = "slurm"
    options_model = SlurmOptions

    def __init__(self, config: ExecutorOptions, poll_s: tuple[float, float] = (1.0, 15.0),
                 settle_s: float = 15.0, python: str = sys.executable,
                 note: Callable[[str], None] | None = None) -> None:
        super().__init__(config)
        assert isinstance(config, SlurmOptions)
        missing = missing_command("sbatch")
        if missing is not None:
            raise SetupError(f"--executor slurm: {missing}; docs/slurm.md shows how to try "
                             f"Slurm on one machine")
        self.config = config
        self.setup = setup_files(config.setup, Path(os.getcwd()))
        self.poll_s, self.settle_s, self.python = poll_s, settle_s, python
        self.note = note or _note_on_stderr
        self.probed = False   # a node said yes: later rounds (stop_after) submit no new probe
        self.store: RunStore | None = None   # the run directory's, once attached
        self.record: dict[str, Any] = {"kind": self.kind, "jobs": {}, "submissions": []}
        self._save: Save = lambda block: None

    def preflight(self, plan: Plan, first: TrialSpec, caller_env: Mapping[str, str]
                  ) -> tuple[Launch, list[str]]:
        """Nothing is checked here (often a login node without a GPU): a probe job checks a node
        in `launch`. A tool missing here is no error: the unwrapped launch, with a note."""
        try:
            return super().preflight(plan, first, caller_env)
        except SetupError as exc:
            return Launch(first.command, dict(first.env)), [
                f"note: the collectors cannot wrap the command on this host ({exc}); with "
                f"--executor slurm a probe job checks them on a node and the node wraps each "
                f"trial"]

    @classmethod
    def trial_states(cls, run_dir: Path, block: Mapping[str, Any], pending: Sequence[str]
                     ) -> tuple[dict[str, TrialState], str | None]:
        """Each pending trial with a job: cancelled by aorta, queued, running, lost (its job
        ended without a result), or unknown when the queue cannot be read; a trial with a
        record is `complete`, with the job that wrote it."""
        recorded = block.get("jobs")
        jobs = {k: e for k, e in recorded.items() if isinstance(e, dict) and e.get("job")
                } if isinstance(recorded, dict) else {}
        # A finished job of a pending trial wrote a result that was deleted: it runs again.
        found = {k: e for k, e in jobs.items() if k in pending and not e.get("finished")}
        asked = {str(e["job"]) for e in found.values() if not e.get("cancelled")}
        note = missing_command("squeue") if asked else None
        queue = None if note else query_jobs(asked)
        if queue is None and note is None:
            note = "squeue failed, so the state of submitted jobs is unknown"
        states = {k: TrialState("complete", str(e["job"])) for k, e in jobs.items()
                  if k not in pending}
        for key, entry in found.items():
            job = str(entry["job"])
            if entry.get("cancelled"):
                states[key] = TrialState("cancelled", job, reason="cancelled by aorta "
                                         "(Ctrl-C); a rerun submits it again")
            elif queue is None:
                states[key] = TrialState("unknown", job)
            elif (state := queue.get(job)) is None or state.phase == "ended":
                states[key] = TrialState("lost", job, state.node if state else None,
                                         describe_end(job, state))
            else:
                states[key] = TrialState(state.phase, job, state.node, state.reason)
        return states, note

    def save(self) -> None:
        self._save(self.record)

    def attach(self, run_dir: Path, block: Mapping[str, Any] | None, save: Save) -> None:
        """Keep job ids in run.json's executor block. A record carried over from a run that
        `--fresh` discarded has its live jobs cancelled: they measured what the user threw
        away and would write into the new run's directories."""
        self.store = RunStore(run_dir)
        self._save = save
        previous = dict(block or {})
        name = job_name(run_dir)
        if previous.get("discarded"):
            old_jobs = {str(e["job"]) for e in (previous.get("jobs") or {}).values()
                        if isinstance(e, dict) and e.get("job") and not e.get("cancelled")}
            cancel_jobs(old_jobs, name, getpass.getuser())
            wait_gone(old_jobs, seconds=30.0)   # before new jobs use the same directories
            previous = {}
        self.record = {"kind": self.kind, "job_name": name, "driver_host": socket.gethostname(),
                       "jobs": dict(previous.get("jobs") or {}),
                       "submissions": list(previous.get("submissions") or [])}
        if isinstance(previous.get("probe"), dict):
            self.record["probe"] = previous["probe"]
        self.save()

    def launch(self, specs: Sequence[TrialSpec], caller_env: Mapping[str, str],
               on_start: OnStart, on_done: OnDone, warden: Warden | None = None) -> None:
        assert self.store is not None, "launch before attach: the run directory is unknown"
        by_key = {s.key: s for s in specs}
        watched: dict[str, str] = {}
        try:
            watched.update(self._reattach(by_key))
            todo = [s for k, s in by_key.items() if k not in watched]
            if todo and self.config.remote_probe and not self.probed:
                self._check_on_node(todo, caller_env)
            watched.update(self._submit(todo, caller_env))
            _Watch(self, by_key, watched, on_start, on_done).until_done()
        except KeyboardInterrupt:
            self.cancel()   # every job of the sweep is in the record, watched or not
            raise

    def _reattach(self, by_key: Mapping[str, TrialSpec]) -> dict[str, str]:
        """Trials whose job from an earlier driver Slurm still knows: watched, not resubmitted."""
        # A finished job whose result.json is gone was deleted to be run again.
        earlier = {k: e["job"] for k, e in self.record["jobs"].items()
                   if k in by_key and not e.get("cancelled") and not e.get("finished")}
        if not earlier:
            return {}
        states = query_jobs(set(earlier.values()))
        if states is None:
            raise SlurmError("squeue failed, so aorta cannot tell which of this run's jobs "
                             "still live; rerun once `squeue` works")
        kept = {k: job for k, job in earlier.items() if job in states}
        if kept:
            self.note(f"re-attached to {len(kept)} Slurm job(s) of an earlier driver "
                      f"(they are not submitted again)")
        return kept

    def _check_on_node(self, todo: Sequence[TrialSpec], caller_env: Mapping[str, str]) -> None:
        """Refuse the sweep before any trial's job if a node's collectors cannot measure there."""
        from aorta.run.executors.slurm.preflight import ProbeJob, check_on_node

        assert self.store is not None
        spec = next((s for s in todo if s.collectors), None)
        if spec is None:
            return   # no collector: nothing to check
        earlier = self.record.get("probe")
        if isinstance(earlier, dict) and "ok" not in earlier and earlier.get("job"):
            cancel_jobs({str(earlier["job"])})   # a killed driver's probe, never answered
        probe = ProbeJob(self.config, self.store, self.record["job_name"], self.python,
                         self.setup, settle_s=self.settle_s)

        def submitted(record: dict[str, Any]) -> None:
            self.record["probe"] = record
            self.save()

        record, refusal = check_on_node(probe, spec, caller_env, self.note, submitted)
        submitted(record)
        if refusal is not None:
            raise SetupError(refusal)
        self.probed = True

    def _submit(self, specs: Sequence[TrialSpec], caller_env: Mapping[str, str]) -> dict[str, str]:
        submitted: dict[str, str] = {}
        after = None
        for start in range(0, len(specs), MAX_ARRAY_TASKS):
            chunk = specs[start:start + MAX_ARRAY_TASKS]
            array = self._submit_array(chunk, caller_env, after)
            for task, spec in enumerate(chunk):
                job = f"{array}_{task}"
                submitted[spec.key] = job
                self.record["jobs"][spec.key] = {"job": job, "submitted_at": utc_now()}
            self.save()
            after = array if self.config.max_parallel else None
        return submitted

    def _submit_array(self, specs: Sequence[TrialSpec], caller_env: Mapping[str, str],
                      after: str | None) -> str:
        assert self.store is not None
        folder = self.store.root / "slurm"
        number = len(self.record["submissions"]) + 1
        manifest = folder / f"submit_{number}.json"
        script = folder / f"submit_{number}.sh"
        secrets = write_manifest(self.store, manifest.name, specs, socket.gethostname(), caller_env)
        self.store.write_text(script.name, batch_script(self.python, manifest,
                                                        self.store.root.name, self.setup),
                              parts=("slurm",), executable=True)
        options = sbatch_options(self.config, self.record["job_name"], folder, len(specs),
                                 Path(os.getcwd()), after)
        # Credentials reach the jobs through their environment, never through a file.
        array = sbatch(options, script, {**caller_env, **secrets}, Path(os.getcwd()))
        self.record["submissions"].append({"job": array, "tasks": len(specs),
                                           "script": script.name, "submitted_at": utc_now()})
        limit = f", at most {self.config.max_parallel} at once" if self.config.max_parallel else ""
        self.note(f"submitted {len(specs)} trial(s) as Slurm job array {array}{limit}; "
                  f"Slurm's logs: {folder}/{array}_<task>.err")
        return array

    def _result(self, key: str) -> TrialResult | None:
        """The trial's record once it is complete (`key` is `cells/<cell>/<trial>`)."""
        assert self.store is not None
        _, cell, name = key.split("/", 2)
        return self.store.read_slot(cell, name).result

    def cancel(self) -> None:
        """Cancel every job of this sweep that has no result yet, wait (briefly) until Slurm
        lets go of them, and mark them so that a rerun submits them anew."""
        if self.store is None:
            return
        open_jobs = {k: str(e["job"]) for k, e in self.record["jobs"].items()
                     if not e.get("cancelled") and not e.get("finished")
                     and self._result(k) is None}
        with suppress(KeyboardInterrupt):   # a second Ctrl-C: the scancel has been sent
            cancel_jobs(set(open_jobs.values()), self.record["job_name"], getpass.getuser())
            for key in open_jobs:
                self.record["jobs"][key]["cancelled"] = True
            self.save()
            wait_gone(set(open_jobs.values()), seconds=15.0)


class _Watch:
    """The driver's loop: look for results, ask Slurm about the rest, report, sleep."""

    def __init__(self, executor: SlurmExecutor, by_key: Mapping[str, TrialSpec],
                 watched: dict[str, str], on_start: OnStart, on_done: OnDone) -> None:
        assert executor.store is not None
        self.ex, self.run_dir, self.by_key = executor, executor.store.root, by_key
        self.waiting = dict(watched)      # trial key -> job id, until its result is in
        self.on_start, self.on_done = on_start, on_done
        self.started: set[str] = set()
        self.gone_since: dict[str, float] = {}
        self.last_counts: dict[str, int] = {}

    def until_done(self) -> None:
        pause = self.ex.poll_s[0]
        while self.waiting:
            changed = self._collect_results()
            if self.waiting:
                changed |= self._look_at_queue()
            if not self.waiting:
                break
            pause = self.ex.poll_s[0] if changed else min(pause * 1.5, self.ex.poll_s[1])
            time.sleep(pause)
        self.ex.save()

    def _collect_results(self) -> bool:
        done = {k: r for k in self.waiting if (r := self.ex._result(k)) is not None}
        for key, result in done.items():
            self._finish(key, result)
        return bool(done)

    def _look_at_queue(self) -> bool:
        states = query_jobs(set(self.waiting.values()))
        if states is None:
            return False   # squeue failed this time; conclude nothing
        self._note_counts(states)
        changed = False
        now = time.monotonic()
        for key, job in list(self.waiting.items()):
            state = states.get(job)
            if state is not None and state.phase == "running" and key not in self.started:
                self.started.add(key)
                self.on_start(self.by_key[key])
                changed = True
            if state is None or state.phase == "ended":
                since = self.gone_since.setdefault(key, now)
                if now - since >= self.ex.settle_s:
                    result = self.ex._result(key)   # it may have landed during the settle time
                    self._finish(key, result if result is not None else lost_result(
                        self.by_key[key], job, state, self.run_dir / "slurm"))
                    changed = True
        return changed

    def _note_counts(self, states: Mapping[str, JobState]) -> None:
        """A line whenever the number of queued or running jobs changes, so that a sweep
        stuck behind other users' jobs says so."""
        counts = {"queued": 0, "running": 0}
        reasons = set()
        for job in self.waiting.values():
            state = states.get(job)
            if state is not None and state.phase in counts:
                counts[state.phase] += 1
                if state.phase == "queued" and state.reason:
                    reasons.add(state.reason)
        if counts != self.last_counts:
            self.last_counts = counts
            why = f" ({', '.join(sorted(reasons))})" if reasons else ""
            self.ex.note(f"Slurm: {counts['running']} running, {counts['queued']} queued{why}")

    def _finish(self, key: str, result: TrialResult) -> None:
        if key not in self.started:
            self.started.add(key)
            self.on_start(self.by_key[key])
        del self.waiting[key]
        entry = self.ex.record["jobs"].get(key)
        if entry is not None:
            entry["finished"] = True
        self.on_done(result)
