"""Opening a history: connect, upgrade the schema, and turn database failures into one line.

A driver's error (server down, bad password, a locked or corrupt file) becomes a `UserError`
naming the database with its password redacted; the driver's own text is scrubbed of the
password too, since some drivers quote their connection string.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from aorta.base.errors import UserError
from aorta.history.db import Database, connect


@contextmanager
def open_history(db_url: str | None, create: bool = True) -> Iterator[Database]:
    """The history at `db_url`, upgraded to the newest schema; disposed of on exit.
    `create=False`: a missing SQLite file is an error instead of a new, empty history."""
    from sqlalchemy.exc import DBAPIError, SQLAlchemyError

    from aorta.history.migrations import upgrade

    db = connect(db_url, create=create)
    try:
        upgrade(db)
        yield db
    except DBAPIError as exc:
        detail = str(exc.orig).strip().splitlines()[0] if exc.orig is not None else str(exc)
        raise UserError(f"{db.shown}: {db.scrub(detail)}") from None
    except SQLAlchemyError as exc:
        detail = str(exc).strip().splitlines()[0]
        raise UserError(f"{db.shown}: {db.scrub(detail)}") from None
    finally:
        db.engine.dispose()
