"""Schema versions: the migrations build exactly the declared tables, run in order, once, and a
database newer than this aorta is refused."""

from __future__ import annotations

import pytest
from sqlalchemy import Column, Integer, MetaData, Table, inspect

from aorta.base.errors import UserError
from aorta.history.db import connect, transaction, upgrade
from aorta.history.schema import METADATA, MIGRATIONS, MIGRATIONS_TABLE, Migration, current_version

LATEST = MIGRATIONS[-1].version


def test_migrated_database_matches_the_declared_tables(db_url: str) -> None:
    db = connect(db_url)
    assert upgrade(db) == 0
    with transaction(db) as conn:
        found = inspect(conn)
        tables = set(found.get_table_names())
        assert tables == set(METADATA.tables)
        for table in METADATA.sorted_tables:
            assert {c["name"] for c in found.get_columns(table.name)} == set(table.columns.keys())
        assert current_version(conn) == LATEST
    assert upgrade(db) == LATEST            # a second call has nothing to do
    db.engine.dispose()


def test_later_migrations_run_in_order_once(db_url: str) -> None:
    db = connect(db_url)
    upgrade(db)                                            # the released schema
    applied: list[int] = []
    extra = MetaData()
    notes = Table("test_notes", extra, Column("id", Integer, primary_key=True))

    def v2(conn: object) -> None:
        applied.append(2)
        notes.create(conn)  # type: ignore[arg-type]

    def v3(conn: object) -> None:
        applied.append(3)

    newer = (*MIGRATIONS, Migration(LATEST + 1, "notes", v2), Migration(LATEST + 2, "noop", v3))
    assert upgrade(db, newer) == LATEST
    assert upgrade(db, newer) == LATEST + 2
    assert applied == [2, 3]
    with transaction(db) as conn:
        assert inspect(conn).has_table("test_notes")
        rows = conn.execute(MIGRATIONS_TABLE.select().order_by(MIGRATIONS_TABLE.c.version))
        assert [r.version for r in rows] == [1, LATEST + 1, LATEST + 2]
    # This aorta (which knows only up to LATEST) now refuses the database.
    with pytest.raises(UserError, match=f"history schema {LATEST + 2} was written by a newer"):
        upgrade(db)
    with transaction(db, write=True) as conn:
        notes.drop(conn)
    db.engine.dispose()
