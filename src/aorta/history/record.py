"""`record_run`: read a run directory, find its commit, and store it in a history."""

from __future__ import annotations

from pathlib import Path

from aorta.history.ingest import RunSnapshot, read_run
from aorta.history.model import Recorded
from aorta.history.provenance import Commit, candidate_dirs, find_commit, repo_relative
from aorta.history.store import context_key, store_run


def record_run(run_dir: Path | str, db_url: str | None = None, *, commit: str | None = None,
               host: str | None = None) -> Recorded:
    """Record the run in `run_dir` into the history at `db_url` (a file path or a database URL;
    None: `$AORTA_HISTORY_DB`, else `aorta_results/history.sqlite`), creating and upgrading
    the database as needed. Recording the same run again replaces its earlier record.

    `commit` names the workload's commit instead of asking git; `host` records the run under
    another host name (a fleet of identical CI machines sharing one trend line).
    Raises `UserError` (exit 2) for a directory that is not a run or an unusable database.
    """
    from aorta.history.session import open_history

    snapshot = read_run(Path(run_dir))
    found = _commit(snapshot, commit)
    key = context_key(snapshot, recipe_key(snapshot), host)
    with open_history(db_url) as db:
        run_id, replaced, samples, kernels = store_run(db, snapshot, key, found)
        shown = db.shown
    context = f"{key.recipe} on {key.host} ({key.gpu})"
    return Recorded(run_dir=str(snapshot.path), db=shown, run_id=run_id, replaced=replaced,
                    context=context, commit=found.sha if found else None,
                    commit_source=found.source if found else None,
                    cells=len(snapshot.cells), samples=samples, kernel_rows=kernels)


def _commit(snapshot: RunSnapshot, given: str | None) -> Commit | None:
    if given:
        return Commit(sha=given, time=None, dirty=None, source="given", repo=None)
    recipe = Path(snapshot.recipe) if snapshot.recipe else None
    return find_commit(candidate_dirs(snapshot.command, snapshot.cwd, recipe))


def recipe_key(snapshot: RunSnapshot) -> str:
    """The recipe as the history names it: its path inside its git repository (the same on
    every clone), else its path as recorded; `run:NAME` for a run without a recipe file."""
    if not snapshot.recipe:
        return f"run:{snapshot.name}"
    path = Path(snapshot.recipe)
    if not path.is_absolute() and snapshot.cwd is not None:
        path = snapshot.cwd / path
    return repo_relative(path) or str(path)
