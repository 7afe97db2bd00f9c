"""The history's tables at the newest schema version (SQLAlchemy Core), and the ordered
migrations that build them (docs/history.md, "Schema and migrations"). A series is (context,
cell, metric) or (context, cell, table, kernel), ordered by run time. A changed table needs a
new entry in `MIGRATIONS`: a test compares a database built by the migrations with these tables.
Rows read back are checked against their columns (`check_rows`): SQLite stores whatever it is
given (text in a REAL column, a blob) and PostgreSQL's floats take NaN and infinities. A column's
`info` holds what a read value must also keep: a minimum, a JSON shape.
"""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (Boolean, Column, Float, ForeignKey, Index, Integer, MetaData, String, Table,
                        Text, func, inspect, select)
from sqlalchemy.engine import Connection

from aorta.base.errors import UserError

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


FIX = ("restore it from a backup, or record the runs again into a new database "
       "(aorta history add RUN_DIR --db NEW)")
_WORDS = {int: "an integer", float: "a finite number", str: "text", bool: "true or false"}


def check_tables(conn: Connection, shown: str) -> None:
    """UserError naming the first declared table or column the database lacks."""
    found = inspect(conn)
    names = set(found.get_table_names())
    for table in METADATA.sorted_tables:
        if table.name not in names:
            raise UserError(f"{shown}: damaged history: table {table.name} is missing; {FIX}")
        columns = {c["name"] for c in found.get_columns(table.name)}
        for missing in (c.name for c in table.columns if c.name not in columns):
            raise UserError(f"{shown}: damaged history: table {table.name} has no column "
                            f"{missing}; {FIX}")


def check_rows(shown: str, table: Table, rows: Iterable[Any]) -> Iterator[Any]:
    """`rows`, checked: one that breaks its columns is a UserError naming the table, the row
    and the value."""
    for row in rows:
        values = row._mapping
        for column in table.columns:
            problem = _problem(column, values[column.name])
            if problem is not None:
                raise UserError(f"{shown}: damaged history: table {table.name}, row "
                                f"{_row_name(table, values)}: {column.name} {problem}; {FIX}")
        yield row


def _problem(column: Column[Any], value: Any) -> str | None:
    if value is None:
        return None if column.nullable else "is NULL"
    kind = column.type.python_type
    fits = (isinstance(value, (int, float)) and math.isfinite(value) if kind is float
            else isinstance(value, kind))
    if isinstance(value, bool) and kind is not bool or not fits:
        return f"is {reprlib.repr(value)}, not {_WORDS.get(kind, kind.__name__)}"
    if value < column.info.get("min", value):
        return f"is {value}, below {column.info['min']}"
    shape = column.info.get("json")
    if shape is not None and not _json_fits(value, shape):
        return f"is {reprlib.repr(value)}, not a JSON {shape.__name__}"
    return None


def _json_fits(text: str, shape: type) -> bool:
    try:
        doc = json.loads(text)
    except ValueError:
        return False
    return isinstance(doc, shape) and not (isinstance(doc, list)
                                           and not all(isinstance(v, str) for v in doc))


def _row_name(table: Table, values: Any) -> str:
    """By primary key, else by every column but the measured ones."""
    keys = [c for c in table.primary_key] or [
        c for c in table.columns if c.type.python_type is not float]
    return "(" + ", ".join(f"{c.name} {reprlib.repr(values[c.name])}" for c in keys) + ")"
