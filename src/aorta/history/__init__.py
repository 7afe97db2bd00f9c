"""A performance history: runs recorded in a database (SQLite by default, PostgreSQL by URL),
series per cell, metric and kernel across commits, and the steps detected in them. Importing
this package loads nothing heavy; SQLAlchemy loads when a function is called.
"""

from __future__ import annotations

from pathlib import Path

from aorta.history.model import Recorded    # dataclasses only: light

__all__ = ["record_run"]


def record_run(run_dir: Path | str, db_url: str | None = None, *, commit: str | None = None,
               host: str | None = None, allow_incomplete: bool = False) -> Recorded:
    """Record a run directory in the history; see `aorta.history.store.record_run`."""
    from aorta.history.store import record_run as _record

    return _record(run_dir, db_url, commit=commit, host=host, allow_incomplete=allow_incomplete)
