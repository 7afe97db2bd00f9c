"""Writing a run into the history and reading series back, through SQLAlchemy Core.

Recording is one transaction: the context row (inserted unless it exists), the run row (a run
recorded again replaces its earlier record: same directory, same uid), its samples and kernel
rows. Readers see the run whole or not at all.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from sqlalchemy import delete, select
from sqlalchemy.engine import Connection

from aorta.history.db import Database, read_connection, write_transaction
from aorta.history.ingest import RunSnapshot
from aorta.history.model import Context, Point, RunInfo, Series
from aorta.history.provenance import Commit
from aorta.history.schema import CONTEXTS, KERNELS, RUNS, SAMPLES

_CHUNK = 500


@dataclass(frozen=True)
class ContextKey:
    recipe: str
    host: str
    gpu: str
    collect: str

    @property
    def digest(self) -> str:
        text = json.dumps([self.recipe, self.host, self.gpu, self.collect])
        return hashlib.sha256(text.encode()).hexdigest()


def context_key(snapshot: RunSnapshot, recipe: str, host: str | None = None) -> ContextKey:
    collect = json.dumps(snapshot.collect, sort_keys=True, separators=(",", ":"), default=str)
    return ContextKey(recipe, host or snapshot.host, snapshot.gpu, collect)


def run_uid(snapshot: RunSnapshot) -> str:
    """Equal for the same run directory recorded twice (or a copy of it)."""
    text = json.dumps([snapshot.fingerprint, snapshot.created_at, snapshot.host, snapshot.name])
    return hashlib.sha256(text.encode()).hexdigest()


def store_run(db: Database, snapshot: RunSnapshot, key: ContextKey,
              commit: Commit | None) -> tuple[int, bool, int, int]:
    """Record the run; returns (run id, replaced an earlier record, samples, kernel rows)."""
    uid = run_uid(snapshot)
    with write_transaction(db) as conn:
        context_id = _context_id(conn, db.dialect, key)
        replaced = conn.execute(delete(RUNS).where(RUNS.c.uid == uid)).rowcount > 0
        run_id = conn.execute(RUNS.insert().values(
            uid=uid, context_id=context_id, name=snapshot.name,
            recipe_sha256=snapshot.recipe_sha256, command=json.dumps(list(snapshot.command)),
            created_at=snapshot.created_at, finished_at=snapshot.finished_at,
            recorded_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
            status=snapshot.status, aorta_version=snapshot.aorta_version,
            commit_sha=commit.sha if commit else None,
            commit_time=commit.time if commit else None,
            commit_dirty=commit.dirty if commit else None,
            commit_source=commit.source if commit else None,
            repo=commit.repo if commit else None,
            trials_passed=sum(c.passed for c in snapshot.cells),
            trials_total=sum(c.total for c in snapshot.cells),
        ).returning(RUNS.c.id)).scalar_one()
        samples = [{"run_id": run_id, "cell": cell.name, "metric": metric, "trial": trial,
                    "value": value}
                   for cell in snapshot.cells for metric, values in cell.metrics.items()
                   for trial, value in values]
        kernels = [{"run_id": run_id, "cell": cell.name, "source": table, "name": name,
                    "trial": row.trial, "total_ms": row.total_ms, "calls": row.calls}
                   for cell in snapshot.cells for (table, name), rows in cell.kernels.items()
                   for row in rows]
        _insert(conn, SAMPLES, samples)
        _insert(conn, KERNELS, kernels)
    return int(run_id), replaced, len(samples), len(kernels)


def _context_id(conn: Connection, dialect: str, key: ContextKey) -> int:
    from sqlalchemy.dialects import postgresql, sqlite

    values = {"key": key.digest, "recipe": key.recipe, "host": key.host, "gpu": key.gpu,
              "collect": key.collect}
    # Two writers may record the first run of a context at once: the loser's insert is a no-op.
    if dialect == "postgresql":
        conn.execute(postgresql.insert(CONTEXTS).values(**values)
                     .on_conflict_do_nothing(index_elements=["key"]))
    else:
        conn.execute(sqlite.insert(CONTEXTS).values(**values)
                     .on_conflict_do_nothing(index_elements=["key"]))
    return int(conn.execute(select(CONTEXTS.c.id).where(CONTEXTS.c.key == key.digest))
               .scalar_one())


def _insert(conn: Connection, table: Any, rows: Sequence[Mapping[str, Any]]) -> None:
    for start in range(0, len(rows), _CHUNK):
        conn.execute(table.insert(), list(rows[start:start + _CHUNK]))


@dataclass(frozen=True)
class Filters:
    """Which series to load; None means any. `kernel` matches a substring of the name."""

    recipe: str | None = None
    host: str | None = None
    gpu: str | None = None
    cell: str | None = None
    metric: str | None = None
    kernel: str | None = None
    kernels: bool = True


def load_runs(conn: Connection, filters: Filters) -> tuple[dict[int, Context], list[RunInfo]]:
    """Contexts and runs that pass the context filters, oldest run first."""
    query = select(CONTEXTS)
    for column, value in (("recipe", filters.recipe), ("host", filters.host),
                          ("gpu", filters.gpu)):
        if value is not None:
            query = query.where(CONTEXTS.c[column] == value)
    contexts = {r.id: Context(r.id, r.recipe, r.host, r.gpu, r.collect)
                for r in conn.execute(query)}
    rows = conn.execute(select(RUNS).where(RUNS.c.context_id.in_(list(contexts)))
                        .order_by(RUNS.c.created_at, RUNS.c.id))
    runs = [RunInfo(r.id, r.context_id, r.name, r.created_at, tuple(json.loads(r.command)),
                    r.status, r.commit_sha, r.commit_time, r.commit_dirty, r.commit_source,
                    r.repo) for r in rows]
    return contexts, runs


def load_series(db: Database, filters: Filters = Filters()) -> list[Series]:
    """Every series passing `filters`, each oldest run first; series with no point are left
    out. Metrics come before kernels, then by context, cell and name."""
    with read_connection(db) as conn:
        contexts, runs = load_runs(conn, filters)
        by_id = {r.id: r for r in runs}
        values: dict[tuple[int, str, str, str | None], dict[int, list[float]]] = \
            defaultdict(lambda: defaultdict(list))
        if filters.kernel is None or filters.metric is not None:
            for row in _rows(conn, SAMPLES, by_id, filters, "metric"):
                values[(by_id[row.run_id].context_id, row.cell, row.metric, None)][
                    row.run_id].append(row.value)
        if filters.kernels and (filters.metric is None or filters.kernel is not None):
            for row in _rows(conn, KERNELS, by_id, filters, "source"):
                if filters.kernel is None or filters.kernel in row.name:
                    values[(by_id[row.run_id].context_id, row.cell, row.source, row.name)][
                        row.run_id].append(row.total_ms)
    order = {r.id: position for position, r in enumerate(runs)}
    out = []
    for (context_id, cell, metric, kernel), per_run in values.items():
        points = tuple(Point(by_id[run_id], tuple(v))
                       for run_id, v in sorted(per_run.items(), key=lambda kv: order[kv[0]]))
        out.append(Series(contexts[context_id], cell, metric, kernel, points))
    out.sort(key=lambda s: (s.kernel is not None, s.context.id, s.cell, s.metric,
                            s.kernel or ""))
    return out


def _rows(conn: Connection, table: Any, runs: Mapping[int, RunInfo], filters: Filters,
          name_column: str) -> Iterable[Any]:
    ids = list(runs)
    for start in range(0, len(ids), _CHUNK):
        query = select(table).where(table.c.run_id.in_(ids[start:start + _CHUNK]))
        if filters.cell is not None:
            query = query.where(table.c.cell == filters.cell)
        if filters.metric is not None:
            query = query.where(table.c[name_column] == filters.metric)
        yield from conn.execute(query.order_by(table.c.run_id, table.c.trial))
