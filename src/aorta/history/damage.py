"""Refusing a damaged history: SQLite stores whatever it is given (text in a REAL column, a
blob) and PostgreSQL's floats take NaN and infinities. Every row read back must fit its column
as `schema` declares it (type, NULL, `info["min"]`, `info["json"]`)."""

from __future__ import annotations

import json
import math
import reprlib
from collections.abc import Iterable, Iterator
from typing import Any

from sqlalchemy import Column, Table, inspect
from sqlalchemy.engine import Connection

from aorta.base.errors import UserError
from aorta.history.schema import METADATA

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
        for column in table.columns:
            if column.name not in columns:
                raise UserError(f"{shown}: damaged history: table {table.name} has no column "
                                f"{column.name}; {FIX}")


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
    if kind is float:
        fits = isinstance(value, (int, float)) and math.isfinite(value)
    else:
        fits = isinstance(value, kind)
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
