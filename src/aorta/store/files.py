"""Writing files under a run directory, confined to it (reading is `aorta.store.reading`'s).
Every directory is opened with `O_NOFOLLOW`, one component at a time from the run directory's
own descriptor, so a symbolic link planted anywhere under it (or at it) is refused, never
followed, even between two writes. Files are written atomically (a temporary file, then
`os.replace`) with mode 0666 (0777 for scripts) less the umask: docs/reliability.md, "Paths".
"""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from aorta.base.errors import RunDirError
from aorta.rendering.json_doc import finite

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def is_disk_full(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


def short_of_space(path: Path) -> int | None:
    """The bytes left to this user (root may use the reserved blocks) on `path`'s filesystem
    when so few (under 64 KiB, or no inode) that a write may just have failed; else None."""
    try:
        fs = os.statvfs(path)
    except OSError:
        return None
    if not fs.f_blocks:   # a filesystem that does not count its space (some FUSE ones)
        return None
    root = os.geteuid() == 0
    free = (fs.f_bfree if root else fs.f_bavail) * fs.f_frsize
    no_inode = fs.f_files > 0 and (fs.f_ffree if root else fs.f_favail) == 0
    return free if free < 64 << 10 or no_inode else None


@contextmanager
def open_dir(root: Path, parts: Sequence[str], create: bool = False) -> Iterator[int]:
    """A descriptor of `root/parts...`, opened without following any link (`root` included).
    Raises `RunDirError` for a link or a non-directory on the way, `FileNotFoundError` when a
    part is missing and `create` is false."""
    path: str | Path = root
    opened = path   # what `fd` is open on
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError as exc:
        _refuse(root, exc)
        raise
    try:
        for part in parts:
            path = os.path.join(path, part)
            try:
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with suppress(FileExistsError):
                    os.mkdir(part, 0o777, dir_fd=fd)
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                _refuse(path, exc)
                raise
            os.close(fd)
            fd, opened = child, path
        yield fd
    except OSError as exc:   # a name relative to a descriptor means nothing to the user
        exc.filename, exc.filename2 = _full(opened, exc.filename), _full(opened, exc.filename2)
        raise
    finally:
        os.close(fd)


def _full(folder: str | Path, name: object) -> object:
    return os.path.join(folder, name) if isinstance(name, str) and name else name


def _refuse(path: str | Path, exc: OSError) -> None:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR):
        raise RunDirError(f"{path}: is a symbolic link or not a directory; aorta writes only "
                          f"inside the run directory and never follows links there: remove "
                          f"it, or choose another --output") from None


def write_bytes(root: Path, parts: Sequence[str], name: str, data: bytes,
                executable: bool = False, private: bool = False) -> Path:
    """Write `data` to `root/parts.../name` atomically; directories are made as needed."""
    import secrets  # here, not at the top: reading a run (sweep status) writes nothing

    with open_dir(root, parts, create=True) as dfd:
        tmp = f".{name[:40]}.{secrets.token_hex(6)}.tmp"
        mode = 0o600 if private else 0o777 if executable else 0o666   # private: owner only
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         mode, dir_fd=dfd)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        except BaseException as exc:
            with suppress(OSError):
                os.unlink(tmp, dir_fd=dfd)
            if isinstance(exc, OSError):   # the file asked for, not its temporary name
                exc.filename, exc.filename2 = name, None
            raise
    return root.joinpath(*parts, name)


def write_anywhere(path: Path, data: str | bytes) -> Path:
    """Write `path` atomically where the user asked (a report outside any run directory):
    its folder may be reached through links; the file itself is replaced, never followed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    write_bytes(Path(os.path.realpath(path.parent)), (), path.name, raw)
    return path


def write_text(root: Path, parts: Sequence[str], name: str, text: str,
               executable: bool = False, private: bool = False) -> Path:
    return write_bytes(root, parts, name, text.encode("utf-8", "surrogateescape"), executable,
                       private)


def json_text(doc: Any) -> str:
    """Strict JSON text: NaN and infinities become null, so no reader has to guess."""
    return json.dumps(finite(doc), indent=2, allow_nan=False, default=str) + "\n"


def write_json_file(root: Path, parts: Sequence[str], name: str, doc: Any) -> Path:
    return write_text(root, parts, name, json_text(doc))


def write_json(path: Path, doc: Any) -> Path:
    """Strict JSON at `path` (its folders made as needed), atomically; for files outside a
    run directory's store, such as test fixtures and benchmarks' inputs."""
    return write_anywhere(path, json_text(doc))


def remove_tree(root: Path, parts: Sequence[str]) -> None:
    """Remove `root/parts...` whatever it is, never following a link out of it."""
    import shutil

    path = root.joinpath(*parts)
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        shutil.rmtree(path)   # fd-based on Linux: links inside are removed, not followed
    else:
        path.unlink()
