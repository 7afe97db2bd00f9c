"""The history's tables at the newest schema version (SQLAlchemy Core), and the ordered
migrations that build them (docs/history.md, "Schema and migrations"). A series is (context,
cell, metric) or (context, cell, table, kernel), ordered by run time. A changed table needs a
new entry in `MIGRATIONS`: a test compares a database built by the migrations with these tables.
A column's `info` holds what a read value must also keep (`damage.py`): a minimum, a JSON shape.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import (Boolean, Column, Float, ForeignKey, Index, Integer, MetaData, String, Table,
                        Text, func, inspect, select)
from sqlalchemy.engine import Connection

METADATA = MetaData()

MIGRATIONS_TABLE = Table(
    "aorta_schema", METADATA,
    Column("version", Integer, primary_key=True, autoincrement=False),
    Column("name", String(200), nullable=False),
    Column("applied_at", String(40), nullable=False),
)

CONTEXTS = Table(
    "contexts", METADATA,
    Column("id", Integer, primary_key=True),
    Column("key", String(64), nullable=False, unique=True),   # sha256 of the four fields
    Column("recipe", Text, nullable=False),
    Column("host", Text, nullable=False),
    Column("gpu", Text, nullable=False),
    Column("collect", Text, nullable=False, info={"json": dict}),   # name -> options
)

RUNS = Table(
    "runs", METADATA,
    Column("id", Integer, primary_key=True),
    Column("uid", String(64), nullable=False, unique=True),   # same run directory, same uid
    Column("context_id", Integer, ForeignKey("contexts.id"), nullable=False, index=True),
    Column("name", Text, nullable=False),
    Column("recipe_sha256", String(64)),
    Column("command", Text, nullable=False, info={"json": list}),
    Column("created_at", String(40), nullable=False),         # ISO 8601, UTC; orders a series
    Column("finished_at", String(40)),
    Column("recorded_at", String(40), nullable=False),
    Column("status", String(40), nullable=False),  # complete | interrupted | running
    Column("aorta_version", String(40)),
    Column("commit_sha", String(64)),
    Column("commit_time", String(40)),
    Column("commit_dirty", Boolean),
    Column("commit_source", String(20)),                      # command | cwd | recipe | given
    Column("repo", Text),                                     # origin URL without credentials
    Column("trials_passed", Integer, nullable=False, info={"min": 0}),
    Column("trials_total", Integer, nullable=False, info={"min": 0}),
)

SAMPLES = Table(
    "samples", METADATA,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("cell", Text, nullable=False),
    Column("metric", Text, nullable=False),
    Column("trial", Integer, nullable=False, info={"min": 0}),
    Column("value", Float, nullable=False),
    Index("samples_run", "run_id"),
)

KERNELS = Table(
    "kernels", METADATA,
    Column("run_id", Integer, ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
    Column("cell", Text, nullable=False),
    Column("source", Text, nullable=False),                   # the table: proton_kernels, ...
    Column("name", Text, nullable=False),
    Column("trial", Integer, nullable=False, info={"min": 0}),
    Column("total_ms", Float, nullable=False, info={"min": 0}),
    Column("calls", Integer, info={"min": 0}),
    Index("kernels_run", "run_id"),
)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[Connection], None]


def _v1_initial(conn: Connection) -> None:
    METADATA.create_all(conn, tables=[t for t in METADATA.sorted_tables
                                      if t is not MIGRATIONS_TABLE])


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "contexts, runs, samples and kernel rows", _v1_initial),
)


def current_version(conn: Connection) -> int:
    """The schema version of the database behind `conn` (0: empty, nothing created yet)."""
    if not inspect(conn).has_table(MIGRATIONS_TABLE.name):
        return 0
    found = conn.execute(select(func.max(MIGRATIONS_TABLE.c.version))).scalar()
    return int(found or 0)
