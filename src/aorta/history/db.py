"""Opening a history (an SQLite file by default, PostgreSQL by URL) with its schema brought up
to date, through SQLAlchemy Core. SQLite: WAL, and every writing transaction starts with `BEGIN
IMMEDIATE`, so writers queue on the busy timeout instead of failing halfway with "database is
locked"; readers open the file read-only. A URL's password is never printed (`redact`,
`Database.secrets`). Why: docs/history.md.
"""

from __future__ import annotations

import importlib.util
import os
import sqlite3
import stat
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import create_engine, event, func, select
from sqlalchemy.engine import URL, Connection, Engine, make_url
from sqlalchemy.exc import ArgumentError, DBAPIError, SQLAlchemyError

from aorta.base.errors import UserError
from aorta.base.redaction import looks_secret
from aorta.history.schema import (MIGRATIONS, MIGRATIONS_TABLE, Migration, check_tables,
                                  current_version)
from aorta.store.files import short_of_space

DEFAULT_DB = Path("aorta_results") / "history.sqlite"
ENV_VAR = "AORTA_HISTORY_DB"
_BUSY_TIMEOUT_S = 120.0
_QUIET_WAIT_MS = 500        # a lock held longer than this is announced before waiting on
_FULL_BELOW = 1 << 20       # bytes free under which an SQLite I/O error means a full disk
# An arbitrary, fixed 63-bit key: every aorta takes the same advisory lock on PostgreSQL.
_PG_LOCK_KEY = 0x616F727461_0001
_KINDS = {stat.S_IFDIR: "a folder", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


@dataclass(frozen=True)
class Database:
    """An open history: the engine, and the URL as it may be shown (password redacted)."""

    engine: Engine
    shown: str
    secrets: tuple[str, ...]    # strings that must never appear in anything printed
    path: Path | None = None    # the SQLite file


def resolve_url(given: str | None) -> URL:
    """The SQLAlchemy URL of `given` (a URL, or an SQLite file's path; None: `$AORTA_HISTORY_DB`,
    else the default file); PostgreSQL through psycopg 3. UserError for a URL it cannot use."""
    if given is not None and not given.strip():
        raise UserError("--db '': empty; give a file path or a postgresql:// URL, or leave "
                        "--db out for $AORTA_HISTORY_DB, else the default file")
    text = given or os.environ.get(ENV_VAR) or str(DEFAULT_DB)
    if "://" not in text:
        return make_url("sqlite://").set(database=str(Path(text).expanduser()))
    scheme = text.split("://", 1)[0]
    if scheme in ("postgres", "postgresql"):
        text = "postgresql+psycopg://" + text.split("://", 1)[1]
    try:
        url = make_url(text)
    except ArgumentError:     # not even a URL: everything between `://` and `@` hidden
        head, _, rest = text.partition("://")
        shown = f"{head}://***@{rest.rsplit('@', 1)[1]}" if "@" in rest else text
        raise UserError(f"--db {shown}: not a database URL; write a file path, "
                        f"sqlite:///FILE or postgresql://USER@HOST/DB") from None
    if url.get_backend_name() not in ("sqlite", "postgresql"):
        raise UserError(f"--db {redact(url)}: unsupported database "
                        f"{url.get_backend_name()!r}; use SQLite (a file) or PostgreSQL")
    if url.get_backend_name() == "postgresql" and url.get_driver_name() != "psycopg":
        raise UserError(f"--db {redact(url)}: driver {url.get_driver_name()!r} is not "
                        f"supported; write postgresql://... (psycopg 3)")
    return url


def redact(url: URL) -> str:
    """The URL with its password, and any password query parameter, shown as `***`."""
    query = {k: ("***" if looks_secret(k) else v) for k, v in url.query.items()}
    return str(url.set(query=query).render_as_string(hide_password=True))


def _secrets(url: URL) -> tuple[str, ...]:
    found: list[str] = [str(url.password)] if url.password else []
    for key, value in url.query.items():
        if looks_secret(key):
            found += [value] if isinstance(value, str) else list(value)
    return tuple(s for s in found if s)


def connect(given: str | None, create: bool = True) -> Database:
    """An engine for `given` (see `resolve_url`); SQLite: the file as `sqlite_file` allows, opened
    read-only where it cannot be written (read-only, or its disk full)."""
    url = resolve_url(given)
    shown = redact(url)
    if url.get_backend_name() == "sqlite":
        path = sqlite_file(url, create)
        # A reader opens a file it can write as usual (it may upgrade the schema, and leaves no
        # -wal, -shm behind), else read-only. On a read-only mount or a full disk SQLite cannot
        # make the -shm a WAL reader needs: there, unless a -wal holds pages it would skip,
        # `immutable` (nothing can be written to it there).
        writable = create or (all(os.access(p, os.W_OK) for p in (path, path.parent))
                              and short_of_space(path.parent) is None)
        if not writable:
            query = {"mode": "ro", "uri": "true"}
            wal = path.with_name(path.name + "-wal")
            if (os.statvfs(path.parent).f_flag & os.ST_RDONLY or short_of_space(path.parent)
                    is not None) and not (wal.exists() and wal.stat().st_size):
                query["immutable"] = "1"
            url = url.set(database="file:" + quote(str(path.absolute())), query=query)
        engine = create_engine(url, connect_args={"timeout": _BUSY_TIMEOUT_S})
        _sqlite_events(engine, shown, writable)
        return Database(engine, shown, _secrets(url), path)
    if importlib.util.find_spec("psycopg") is None:
        raise UserError(f"--db {shown}: PostgreSQL needs psycopg 3; install it with "
                        f"pip install 'aorta-profiling[postgres]'")
    engine = create_engine(url, pool_pre_ping=True, hide_parameters=True)
    return Database(engine, shown, _secrets(url))


def sqlite_file(url: URL, create: bool) -> Path:
    """The SQLite file of `url`: an existing regular file, or (`create`) a new path whose folder
    is made. Anything else (a folder, a device such as /dev/null, a FIFO, a dangling link) is a
    `UserError`: SQLite would write its journal beside it."""
    if not url.database or url.database == ":memory:":
        raise UserError("--db: an in-memory SQLite database keeps nothing; give a file")
    path = Path(url.database)
    fix = "give the path of an SQLite file, or of a new one"
    try:
        if path.exists():
            if not path.is_file():
                kind = _KINDS.get(stat.S_IFMT(path.stat().st_mode), "a device")
                link = "a link to " if path.is_symlink() else ""
                raise UserError(f"--db {path}: {link}{kind}, not a database file; {fix}")
            return path
        if path.is_symlink():
            raise UserError(f"--db {path}: a link to {os.readlink(path)}, which does not "
                            f"exist; {fix}")
        above = next(p for p in path.absolute().parents if p.exists())
        if not above.is_dir():
            raise UserError(f"--db {path}: {above} is a file, not a folder; {fix}")
        if not create:
            raise UserError(f"{path}: no history there yet; record a run first with "
                            f"`aorta history add RUN_DIR --db {path}`")
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename not in (None, str(path)) else ""
        raise UserError(f"--db {path}: {exc.strerror or exc}{where}; {fix} in a folder that "
                        f"exists or can be made") from None
    return path


def _sqlite_events(engine: Engine, shown: str, writable: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # The driver's own transaction handling is turned off so that `_on_begin` decides.
        dbapi_conn.isolation_level = None
        if writable:
            dbapi_conn.execute("PRAGMA journal_mode=WAL")
        dbapi_conn.execute("PRAGMA foreign_keys=ON")

    @event.listens_for(engine, "begin")
    def _on_begin(conn: Connection) -> None:
        if not conn.get_execution_options().get("aorta_write", False):
            conn.exec_driver_sql("BEGIN")
            return
        # A writer: a lock held by another one is announced once, then waited on.
        raw = conn.connection.dbapi_connection
        assert raw is not None
        raw.execute(f"PRAGMA busy_timeout={_QUIET_WAIT_MS}")
        try:
            raw.execute("BEGIN IMMEDIATE")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc):
                raise
        finally:
            raw.execute(f"PRAGMA busy_timeout={int(_BUSY_TIMEOUT_S * 1000)}")
        print(f"aorta: {shown}: another writer holds the database's lock; waiting for it up "
              f"to {_BUSY_TIMEOUT_S:g} s", file=sys.stderr, flush=True)
        conn.exec_driver_sql("BEGIN IMMEDIATE")


@contextmanager
def transaction(db: Database, write: bool = False) -> Iterator[Connection]:
    """A transaction, rolled back on any exception; SQLite begins a writing one IMMEDIATE."""
    with db.engine.connect().execution_options(aorta_write=write) as conn, conn.begin():
        yield conn


@contextmanager
def open_history(db_url: str | None, create: bool = True) -> Iterator[Database]:
    """The history at `db_url`, upgraded to the newest schema; disposed of on exit.
    `create=False`: a missing SQLite file is an error instead of a new, empty history."""
    db = connect(db_url, create=create)
    try:
        upgrade(db)
        with transaction(db) as conn:
            check_tables(conn, db.shown)
        yield db
    except SQLAlchemyError as exc:
        # A driver's error carries its own message, which says the most.
        cause = exc.orig if isinstance(exc, DBAPIError) and exc.orig is not None else exc
        detail = _explained(db, (str(cause).strip().splitlines() or [type(cause).__name__])[0])
        for secret in db.secrets:
            detail = detail.replace(secret, "***")
        raise UserError(f"{db.shown}: {detail}") from None
    finally:
        db.engine.dispose()


def _explained(db: Database, detail: str) -> str:
    """SQLite's words for a full disk and a lock that outlasted the wait, made plain."""
    if db.path is None:
        return detail
    folder = db.path.absolute().parent
    if ("unable to open" in detail or "readonly" in detail) and not os.access(folder, os.W_OK):
        if db.engine.url.query.get("mode") == "ro":
            return (f"{detail}: it cannot be written here, and reading it needs a write first "
                    f"(no or an older history schema, or a -wal without its -shm); open it "
                    f"once where it can be written, or give another --db")
        return (f"{detail}: {folder} is read-only here, and recording writes the file and "
                f"its -wal and -shm beside it; record into a history on a writable disk")
    if "database is locked" in detail:
        return (f"{detail}: another writer held it for {_BUSY_TIMEOUT_S:g} s; run the command "
                f"again once that writer is done")
    if "disk is full" in detail or "disk I/O error" in detail:
        fs = os.statvfs(folder)
        free = fs.f_bavail * fs.f_frsize
        if free < _FULL_BELOW or "disk is full" in detail:
            return (f"the disk holding {folder} is full ({free // 1024} KiB free; SQLite: "
                    f"{detail}); free some space there and run the command again")
    return detail


def upgrade(db: Database, migrations: Sequence[Migration] | None = None) -> int:
    """Bring the database to the newest of `migrations` (default: the released ones); returns its
    version before. UserError when it is newer: an old aorta never writes an unknown schema."""
    migrations = migrations or MIGRATIONS
    latest = migrations[-1].version
    with transaction(db) as conn:
        before = current_version(conn)
    _refuse_newer(db, before, latest)
    if before == latest:
        return before
    # Under the write lock, the version is read again: another process may have just upgraded.
    with transaction(db, write=True) as conn:
        if conn.dialect.name == "postgresql":
            conn.execute(select(func.pg_advisory_xact_lock(_PG_LOCK_KEY)))
        MIGRATIONS_TABLE.create(conn, checkfirst=True)
        at = current_version(conn)
        _refuse_newer(db, at, latest)
        for migration in (m for m in migrations if m.version > at):
            migration.apply(conn)
            conn.execute(MIGRATIONS_TABLE.insert().values(
                version=migration.version, name=migration.name,
                applied_at=datetime.now(timezone.utc).isoformat(timespec="seconds")))
    return before


def _refuse_newer(db: Database, version: int, latest: int) -> None:
    if version > latest:
        raise UserError(f"{db.shown}: history schema {version} was written by a newer aorta "
                        f"(this one knows up to {latest}); upgrade aorta to use it")
