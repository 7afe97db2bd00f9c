"""Issue 24: what `--db` may name (a regular file or a new path, never '', /dev/null, a folder,
a FIFO or a link to one), a history on a read-only mount (readable), on a full disk (said in
words) and locked by another writer (announced once, then waited for)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from aorta_testing import REPO, run_aorta, small_filesystem
from history_helpers import series_runs


def _one_line_error(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert done.stderr.startswith("aorta: error: ") and len(done.stderr.splitlines()) == 1
    for word in words:
        assert word in done.stderr, done.stderr


def _not_files(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "to-folder").symlink_to(folder)
    (tmp_path / "to-nothing").symlink_to(tmp_path / "nothing")
    (tmp_path / "plain").write_text("x")
    return {"device": (Path("/dev/null"), "a device, not a database file"),
            "folder": (folder, "a folder, not a database file"),
            "fifo": (fifo, "a FIFO, not a database file"),
            "link to a folder": (tmp_path / "to-folder", "a link to a folder"),
            "dangling link": (tmp_path / "to-nothing", "which does not exist"),
            "under a file": (tmp_path / "plain" / "h.sqlite", f"{tmp_path / 'plain'} is a file")}


def test_db_must_be_a_regular_file_or_a_new_path(tmp_path: Path) -> None:
    journal = Path("/dev/null-journal")
    existed = journal.exists()
    (run,) = series_runs(tmp_path / "runs", [1.0])
    for case, (path, words) in _not_files(tmp_path).items():
        for command in (["add", str(run)], ["show"], ["report"]):
            done = run_aorta("history", *command, "--db", str(path), cwd=tmp_path)
            _one_line_error(done, f"--db {path}: ", words)
            assert "give the path of an SQLite file" in done.stderr, case
    assert journal.exists() == existed
    assert not (tmp_path / "nothing").exists()
    for command in (["add", str(run)], ["show"], ["report"]):
        _one_line_error(run_aorta("history", *command, "--db", "", cwd=tmp_path),
                        "--db '': empty")
    assert not (tmp_path / "aorta_results").exists()


def test_a_new_path_gets_its_folder(tmp_path: Path) -> None:
    (run,) = series_runs(tmp_path / "runs", [1.0])
    db = tmp_path / "new" / "deeper" / "h.sqlite"
    assert run_aorta("history", "add", str(run), "--db", str(db)).returncode == 0
    assert db.is_file()


def test_a_history_on_a_read_only_mount_is_readable(tmp_path: Path) -> None:
    with small_filesystem(tmp_path / "mnt") as mount:
        db = mount / "odd ?#%20 name.sqlite"     # opened by a URI: these must be quoted
        runs = series_runs(tmp_path / "runs", [1.0, 1.0, 1.5])
        assert run_aorta("history", "add", *map(str, runs), "--db", str(db)).returncode == 0
        remount = subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True,
                                 text=True, check=False)
        if remount.returncode != 0:
            pytest.skip(f"cannot remount read-only here: {remount.stderr.strip()}")
        before = sorted(os.listdir(mount))
        done = run_aorta("history", "show", "--db", str(db), "--metric", "wall_s")
        assert done.returncode == 0 and "run002" in done.stdout, done.stderr
        page = tmp_path / "page.html"
        done = run_aorta("history", "report", "--db", str(db), "--output", str(page))
        assert done.returncode == 0 and page.is_file(), done.stderr
        assert sorted(os.listdir(mount)) == before
        done = run_aorta("history", "add", str(runs[0]), "--db", str(db))
        _one_line_error(done, f"{mount} is read-only here", "writable disk")


def test_a_read_only_history_with_a_live_wal_is_read_whole(tmp_path: Path) -> None:
    """Pages still in the `-wal` are read (never `immutable`, which would skip them); without
    its `-shm`, which cannot be made on a read-only mount, the refusal says why."""
    with small_filesystem(tmp_path / "mnt") as mount:
        db = mount / "h.sqlite"
        runs = series_runs(tmp_path / "runs", [1.0, 1.0])
        assert run_aorta("history", "add", *map(str, runs), "--db", str(db)).returncode == 0
        writer = sqlite3.connect(db)
        writer.execute("PRAGMA wal_autocheckpoint=0")
        with writer:
            writer.execute("UPDATE runs SET name = name || '-in-wal'")
        copies = {p.name: p.read_bytes() for p in mount.iterdir()}    # as a crash leaves them
        writer.close()
        for name, data in copies.items():
            (mount / name).write_bytes(data)
        if subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=False).returncode:
            pytest.skip("cannot remount read-only here")
        done = run_aorta("history", "show", "--db", str(db), "--metric", "wall_s")
        assert done.returncode == 0 and "run001-in-wal" in done.stdout, done.stderr
        subprocess.run(["mount", "-o", "remount,rw", str(mount)], check=True)
        (mount / "h.sqlite-shm").unlink()
        subprocess.run(["mount", "-o", "remount,ro", str(mount)], check=True)
        done = run_aorta("history", "show", "--db", str(db), "--metric", "wall_s")
        _one_line_error(done, "a -wal without its -shm")


def test_a_full_disk_is_said_in_words(tmp_path: Path) -> None:
    runs = series_runs(tmp_path / "runs", [1.0, 1.1])
    with small_filesystem(tmp_path / "mnt", size="1m") as mount:
        filler = os.open(mount / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(filler, b"\0" * 4096):
                pass
        except OSError:
            pass
        finally:
            os.close(filler)
        done = run_aorta("history", "add", *map(str, runs), "--db", str(mount / "h.sqlite"))
        _one_line_error(done, f"the disk holding {mount} is full", "free some space there")


def test_a_held_lock_is_announced_once_then_waited_for(tmp_path: Path) -> None:
    runs = series_runs(tmp_path / "runs", [1.0, 1.1])
    db = tmp_path / "h.sqlite"
    assert run_aorta("history", "add", str(runs[0]), "--db", str(db)).returncode == 0
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    proc = subprocess.Popen([sys.executable, "-m", "aorta", "history", "add", str(runs[1]),
                             "--db", str(db)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()        # printed while the lock is still held
        assert "another writer holds the database's lock; waiting for it up to 120 s" in first
    finally:
        holder.execute("COMMIT")
        holder.close()
        out, rest = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "recorded" in out and rest == "", rest
