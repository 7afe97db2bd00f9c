"""Schema versions: an ordered list of migrations and the table that records which ran.

Every `aorta history` command calls `upgrade` first. It reads the version the database is at
(the highest row of `aorta_schema`); when that is older than `LATEST` it takes the database's
write lock (SQLite: `BEGIN IMMEDIATE`; PostgreSQL: a transaction-scoped advisory lock), reads
the version again (another process may have just upgraded), and applies the missing migrations
in order, each recorded in the same transaction. A database newer than this aorta is refused
with the version numbers, so an old aorta never writes into a schema it does not know.

Why not alembic: its script directory, env.py and revision graph serve applications whose
operators run upgrades by hand. Here each user's file (or a shared server) must upgrade itself
on first use, under concurrent writers, with one lock; that is a dozen lines around SQLAlchemy.
A migration that alters a table can still use alembic's `Operations` on the connection given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from sqlalchemy import func, inspect, select
from sqlalchemy.engine import Connection

from aorta.base.errors import UserError
from aorta.history.db import Database, read_connection, write_transaction
from aorta.history.schema import METADATA, MIGRATIONS_TABLE

# An arbitrary, fixed 63-bit key: every aorta takes the same advisory lock on PostgreSQL.
_PG_LOCK_KEY = 0x616F727461_0001


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    apply: Callable[[Connection], None]


def _v1_initial(conn: Connection) -> None:
    """contexts, runs, samples, kernels."""
    METADATA.create_all(conn, tables=[t for t in METADATA.sorted_tables
                                      if t is not MIGRATIONS_TABLE])


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "contexts, runs, samples and kernel rows", _v1_initial),
)
LATEST = MIGRATIONS[-1].version


def current_version(conn: Connection) -> int:
    """The schema version of the database behind `conn` (0: empty, nothing created yet)."""
    if not inspect(conn).has_table(MIGRATIONS_TABLE.name):
        return 0
    found = conn.execute(select(func.max(MIGRATIONS_TABLE.c.version))).scalar()
    return int(found or 0)


def upgrade(db: Database, migrations: Sequence[Migration] = MIGRATIONS) -> int:
    """Bring the database to the newest version; returns the version it was at before.
    Raises UserError when the database is newer than this aorta."""
    latest = migrations[-1].version
    with read_connection(db) as conn:
        before = current_version(conn)
    _refuse_newer(db, before, latest)
    if before == latest:
        return before
    with write_transaction(db) as conn:
        if db.dialect == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(_PG_LOCK_KEY)))
        MIGRATIONS_TABLE.create(conn, checkfirst=True)
        at = current_version(conn)
        _refuse_newer(db, at, latest)
        for migration in migrations:
            if migration.version <= at:
                continue
            migration.apply(conn)
            conn.execute(MIGRATIONS_TABLE.insert().values(
                version=migration.version, name=migration.name,
                applied_at=datetime.now(timezone.utc).isoformat(timespec="seconds")))
    return before


def _refuse_newer(db: Database, version: int, latest: int) -> None:
    if version > latest:
        raise UserError(f"{db.shown}: history schema {version} was written by a newer aorta "
                        f"(this one knows up to {latest}); upgrade aorta to use it")
