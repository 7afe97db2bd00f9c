"""Reading records and logs: the read side of `aorta.store.files`. Only regular files are read,
opened non-blocking, so a FIFO planted where a record should be cannot hang a reader.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any, BinaryIO

MAX_RECORD_BYTES = 256 << 20


class RecordError(ValueError):
    """A file exists but is not a valid record (unreadable, not strict JSON, too deep)."""


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """`path` opened for reading, non-blocking; `RecordError` when it is not a regular file
    (a FIFO or device where a record or log should be)."""
    fh = os.fdopen(os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK), "rb")
    if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
        fh.close()
        raise RecordError("not a regular file")
    return fh


def read_text_file(path: str | os.PathLike[str], limit: int = MAX_RECORD_BYTES) -> str:
    """A file's text; `RecordError` when it is larger than `limit` or not a regular file."""
    with open_regular(path) as fh:
        # Its size first: asking for `limit` bytes would allocate 256 MiB for every record.
        size = min(os.fstat(fh.fileno()).st_size, limit)
        data = fh.read(size + 1)
        if len(data) > size:    # it grew, or says no size (some FUSE filesystems)
            data += fh.read(limit + 1 - len(data))
    if len(data) > limit:
        raise RecordError(f"larger than {limit >> 20} MiB")
    return data.decode("utf-8", "replace")


def read_json_file(path: str | os.PathLike[str], limit: int = MAX_RECORD_BYTES) -> Any:
    """Strict JSON from `path`. `OSError` when it cannot be read, `RecordError` when it is
    not strict JSON (NaN/Infinity, nested past the parser's limit, too large)."""
    text = read_text_file(path, limit)
    try:
        return json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise RecordError(f"not valid JSON ({exc})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")


def read_tail(path: str | os.PathLike[str] | None, limit: int = 4096) -> str | None:
    """The last `limit` bytes of a file, decoded (bad bytes replaced); None when it cannot be
    read (a log that was never written, a trial that never started, not a regular file)."""
    if path is None:
        return None
    try:
        with open_regular(path) as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - limit))
            return fh.read().decode("utf-8", "replace")
    except (OSError, RecordError):
        return None
