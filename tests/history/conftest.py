"""Every history test that takes `db_url` runs twice: on an SQLite file and on PostgreSQL
(`bash scripts/postgres-local.sh` starts one; without a reachable server those skip)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from history_helpers import POSTGRES_URL


def postgres_unavailable() -> str | None:
    try:
        import psycopg
    except ImportError:
        return "psycopg is not installed (pip install 'psycopg[binary]')"
    try:
        with psycopg.connect(POSTGRES_URL,
                             connect_timeout=3):
            return None
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return (f"no PostgreSQL server reachable for the tests ({first}); "
                f"bash scripts/postgres-local.sh starts one")


#: A schema of its own for each test process (each pytest-xdist worker, each test run on the
#: machine): tests running at once on one database would otherwise drop each other's tables.
SCHEMA = f"aorta_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}_{os.getpid()}"


def _reset_postgres(create: bool = True) -> None:
    import psycopg

    with psycopg.connect(POSTGRES_URL, autocommit=True) as conn:
        conn.execute(f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
        if create:
            conn.execute(f"CREATE SCHEMA {SCHEMA}")


@pytest.fixture(params=["sqlite", "postgresql"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "history.sqlite")
        return
    reason = postgres_unavailable()
    if reason is not None:
        pytest.skip(reason)
    _reset_postgres()
    yield f"{POSTGRES_URL}?options=-csearch_path%3D{SCHEMA}"
    _reset_postgres(create=False)
