"""Writing a run into the history and reading series back. Recording is one transaction
(context, run, samples, kernel rows), so readers see a run whole or not at all."""

from __future__ import annotations

import hashlib
import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from statistics import median
from typing import Any, NamedTuple

from sqlalchemy import Table, delete, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.engine import Connection

from aorta.base.errors import UserError
from aorta.history.db import Database, open_history, transaction
from aorta.history.ingest import (Commit, RunSnapshot, candidate_dirs, find_commit, read_run,
                                   repo_relative)
from aorta.history.model import Context, Point, Recorded, RunInfo, Series
from aorta.history.schema import CONTEXTS, KERNELS, RUNS, SAMPLES, check_rows

_CHUNK = 500    # run ids per query: SQLite caps the parameters of one statement
_Key = tuple[int, str, str, str | None]     # context, cell, metric or kernel table, kernel
MIN_KERNEL_RUNS = 5     # a kernel series in fewer of the runs shown is left out (start-up noise)


def record_run(run_dir: Path | str, db_url: str | None = None, *, commit: str | None = None,
               host: str | None = None, allow_incomplete: bool = False) -> Recorded:
    """Record `run_dir` into the history at `db_url` (see `db.resolve_url`), created or upgraded
    as needed; a run recorded again replaces its record. `commit` overrides git's answer; `host`
    files it under another host (identical CI machines, one trend line). Raises `UserError`
    (exit 2) for a directory that is not a run, a run that is not complete (unless
    `allow_incomplete`: its points are then marked and kept out of change detection) or an
    unusable database."""
    snapshot = read_run(Path(run_dir))
    status = snapshot.run.status
    if status != "complete" and not allow_incomplete:
        raise UserError(f"{snapshot.path}: run.json says {status}, not complete, and its numbers "
                        f"could make or hide a step; finish it (the same `aorta sweep run` "
                        f"resumes it), or record it marked with --allow-incomplete")
    found = Commit(sha=commit, time=None, dirty=None, source="given", repo=None) if commit \
        else find_commit(candidate_dirs(snapshot.run.command, snapshot.cwd, snapshot.recipe_path))
    fields = {"recipe": recipe_key(snapshot), "host": host or snapshot.host,
              "gpu": snapshot.gpu, "collect": json.dumps(snapshot.collect, sort_keys=True,
                                                         separators=(",", ":"), default=str)}
    with open_history(db_url) as db, transaction(db, write=True) as conn:
        context = Context(_context_id(conn, fields), **fields)
        # Equal for the same run directory recorded twice (or a copy of it).
        uid = hashlib.sha256(json.dumps([snapshot.run.fingerprint, snapshot.created_at,
                                         snapshot.host, snapshot.run.run]).encode()).hexdigest()
        replaced = conn.execute(delete(RUNS).where(RUNS.c.uid == uid)).rowcount > 0
        run_id = _insert_run(conn, snapshot, uid, context.id, found)
        samples = [dict(zip(("metric", "trial", "value"), row), run_id=run_id, cell=cell.name)
                   for cell in snapshot.cells for row in cell.samples]
        kernels = [dict(zip(("source", "name", "trial", "total_ms", "calls"), row),
                        run_id=run_id, cell=cell.name)
                   for cell in snapshot.cells for row in cell.kernels]
        for table, rows in ((SAMPLES, samples), (KERNELS, kernels)):
            if rows:
                conn.execute(table.insert(), rows)
    return Recorded(run_dir=str(snapshot.path), db=db.shown, run_id=run_id, replaced=replaced,
                    context=context.label, commit=found.sha if found else None,
                    commit_source=found.source if found else None, cells=len(snapshot.cells),
                    samples=len(samples), kernel_rows=len(kernels), status=status)


def recipe_key(snapshot: RunSnapshot) -> str:
    """The recipe as the history names it: its path inside its git repository (the same on
    every clone), else its path as recorded; `run:NAME` for a run without a recipe file."""
    path = snapshot.recipe_path
    if path is None:
        return f"run:{snapshot.run.run}"
    return repo_relative(path) or str(path)


def _context_id(conn: Connection, fields: Mapping[str, str]) -> int:
    key = hashlib.sha256(json.dumps([fields["recipe"], fields["host"], fields["gpu"],
                                     fields["collect"]]).encode()).hexdigest()
    # Two writers may record the first run of a context at once: the loser's insert is a no-op.
    insert = postgresql.insert if conn.dialect.name == "postgresql" else sqlite.insert
    conn.execute(insert(CONTEXTS).values(key=key, **fields)
                 .on_conflict_do_nothing(index_elements=["key"]))
    return int(conn.execute(select(CONTEXTS.c.id).where(CONTEXTS.c.key == key)).scalar_one())


def _insert_run(conn: Connection, snapshot: RunSnapshot, uid: str, context_id: int,
                commit: Commit | None) -> int:
    run = snapshot.run
    commit_fields = {"commit_sha": commit.sha, "commit_time": commit.time,
                     "commit_dirty": commit.dirty, "commit_source": commit.source,
                     "repo": commit.repo} if commit else {}
    return int(conn.execute(RUNS.insert().values(
        uid=uid, context_id=context_id, name=run.run, recipe_sha256=run.recipe_sha256,
        command=json.dumps(list(run.command)), created_at=snapshot.created_at,
        finished_at=run.finished_at,
        recorded_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        status=run.status, aorta_version=run.aorta_version, **commit_fields,
        trials_passed=sum(c.passed for c in snapshot.cells),
        trials_total=sum(c.total for c in snapshot.cells),
    ).returning(RUNS.c.id)).scalar_one())


@dataclass(frozen=True)
class Filters:
    """Which series to load; None means any. `kernel` matches a substring of the name."""

    recipe: str | None = None
    host: str | None = None
    gpu: str | None = None
    cell: str | None = None
    metric: str | None = None
    kernel: str | None = None


class Loaded(NamedTuple):
    series: list[Series]
    runs: dict[int, list[RunInfo]]  # each context's runs, oldest first
    few: int                        # kernel series left out: in too few of the runs shown


def load_history(db: Database, filters: Filters = Filters(), runs: int | None = None,
                 top: int = 0) -> Loaded:
    """The series passing `filters`, each oldest run first and whole (the runs shown limit
    only what is printed and drawn), but for kernel series that ran in fewer than
    `MIN_KERNEL_RUNS` of the newest `runs` runs of their context (None: all; in all of them
    where fewer), which are counted. Of kernels, `top` per cell, the largest at their newest
    run (0: all). Metrics come before kernels, then by context, cell and name; series with no
    point are left out. A damaged row is a UserError naming it."""
    query = select(CONTEXTS)
    for column in ("recipe", "host", "gpu"):
        if getattr(filters, column) is not None:
            query = query.where(CONTEXTS.c[column] == getattr(filters, column))
    with transaction(db) as conn:
        contexts = {r.id: Context(r.id, r.recipe, r.host, r.gpu, r.collect)
                    for r in check_rows(db.shown, CONTEXTS, conn.execute(query))}
        rows = conn.execute(select(RUNS).where(RUNS.c.context_id.in_(list(contexts)))
                            .order_by(RUNS.c.created_at, RUNS.c.id))
        runs_of = [RunInfo(r.id, r.context_id, r.name, r.created_at, tuple(json.loads(r.command)),
                           r.commit_sha, r.commit_dirty, r.commit_source, r.status)
                   for r in check_rows(db.shown, RUNS, rows)]
        by_id = {r.id: r for r in runs_of}
        order = {r.id: position for position, r in enumerate(runs_of)}
        context_of = {r.id: r.context_id for r in runs_of}
        per_context: dict[int, list[RunInfo]] = defaultdict(list)
        for run in runs_of:
            per_context[run.context_id].append(run)
        values: dict[_Key, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
        if filters.kernel is None or filters.metric is not None:
            for run_id, cell, metric, _, value in _rows(conn, SAMPLES, list(by_id), filters,
                                                        db.shown):
                values[(context_of[run_id], cell, metric, None)][run_id].append(value)
        few = 0
        if filters.metric is None or filters.kernel is not None:
            newest = {c: its[-runs if runs else 0:] for c, its in per_context.items()}
            recent = [r.id for its in newest.values() for r in its]
            kernels = _kernel_values(conn, recent, context_of, filters, db.shown)
            enough = {key: per_run for key, per_run in kernels.items()
                      if len(per_run) >= min(MIN_KERNEL_RUNS, len(newest[key[0]]))}
            few, keep = len(kernels) - len(enough), _largest(enough, order, top)
            if len(recent) < len(by_id) and keep:     # the chosen ones, whole
                names = sorted({key[3] for key in keep if key[3] is not None})
                kernels = _kernel_values(conn, list(by_id), context_of, filters, db.shown, names)
            values.update((key, per_run) for key, per_run in kernels.items() if key in keep)
    out = [Series(contexts[context_id], cell, metric, kernel, tuple(
               Point(by_id[i], tuple(per_run[i])) for i in sorted(per_run, key=order.__getitem__)))
           for (context_id, cell, metric, kernel), per_run in values.items()]
    return Loaded(sorted(out, key=lambda s: (s.kernel is not None, s.context.id, s.cell,
                                             s.metric, s.kernel or "")),
                  dict(per_context), few)


def _kernel_values(conn: Connection, ids: list[int], context_of: Mapping[int, int],
                   filters: Filters, shown: str,
                   names: Sequence[str] = ()) -> dict[_Key, dict[int, list[float]]]:
    """The kernel rows of the runs `ids` as series, by kernel (only those in `names`, if any)."""
    values: dict[_Key, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    part = filters.kernel or ""
    for run_id, cell, source, name, _, total_ms, _ in _rows(conn, KERNELS, ids, filters, shown,
                                                           names):
        if part in name:
            values[(context_of[run_id], cell, source, name)][run_id].append(total_ms)
    return values


def _largest(kernels: dict[_Key, dict[int, list[float]]], order: Mapping[int, int],
             top: int) -> set[_Key]:
    """The `top` kernels (0: all) of each (context, cell), the largest at their newest run
    (`order`: each run's position among the runs, oldest first)."""
    groups: dict[tuple[int, str], list[tuple[float, _Key]]] = defaultdict(list)
    for key, per_run in kernels.items():
        groups[key[:2]].append((-median(per_run[max(per_run, key=order.__getitem__)]), key))
    return {key for group in groups.values() for _, key in sorted(group)[:top or None]}


def _rows(conn: Connection, table: Table, ids: list[int], filters: Filters, shown: str,
          names: Sequence[str] = ()) -> Iterable[Any]:
    """The rows of `table` (samples or kernels) of the runs `ids`, each run's in trial order,
    checked."""
    for start in range(0, len(ids), _CHUNK):
        query = select(table).where(table.c.run_id.in_(ids[start:start + _CHUNK]))
        if filters.cell is not None:
            query = query.where(table.c.cell == filters.cell)
        if filters.metric is not None:
            query = query.where(table.c["metric" if table is SAMPLES else "source"]
                                == filters.metric)
        if names:
            query = query.where(table.c.name.in_(names))
        yield from _checked(shown, table, conn.execute(query.order_by(table.c.run_id,
                                                                    table.c.trial)).all())


def _checked(shown: str, table: Table, rows: Sequence[Any]) -> Sequence[Any]:
    """`rows` (whole rows of `table`, which has no JSON column), checked as `check_rows` does
    but a column at a time with builtins (a long history has hundreds of thousands of rows);
    where any value could break its column, by `check_rows`, which names the row."""
    for column, values in zip(table.columns, zip(*rows)):
        kind = column.type.python_type
        numbers = [v for v in values if v is not None] if column.nullable else values
        if not (set(map(type, numbers)) <= ({kind, int} if kind is float else {kind})
                and (kind is not float or all(map(math.isfinite, numbers)))
                and ("min" not in column.info or min(numbers, default=0) >= column.info["min"])):
            return list(check_rows(shown, table, rows))
    return rows
