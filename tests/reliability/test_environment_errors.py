"""Issue 24: a filesystem that refuses aorta (read-only, full, a path under a regular file, a
directory where a file must go, a name too long) gives one line `aorta: error: <what> <path>: <cause>; <fix>`
and exit 2 in every command, never a traceback nor "internal error", and costs no result
already written; a command that only reads answers as it does on a writable disk. The
read-only and full cases mount a small tmpfs, which needs the privilege to: skipped (with the
reason) where that is not allowed."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import click
import pytest

from aorta.cli.group import cli
from aorta_testing import run_aorta, small_filesystem

# Every command's arguments, and the file it writes under {place} (None: it only reads).
# {place} is the folder under test; {run} is a finished run and {db} a history database that
# holds it, both in {place} too where {place} can exist, else beside it (a row without {place}
# is skipped there). A command of `aorta` missing here fails
# `test_every_command_has_a_row`.
PASS = f"--trials 2 --collect none -- {sys.executable} -c pass"
CASES: dict[str, list[tuple[str, str | None]]] = {
    "sweep run": [(f"--output {{place}}/runs {PASS}", "runs/adhoc/perf.md"),     # a resume
                  (f"--output {{place}}/new {PASS}", "new/adhoc/perf.md")],     # a new run
    "sweep plan": [(f"--output {{place}}/runs {PASS}", None)],
    "sweep status": [("{place}/runs/adhoc", None)],
    "report": [("{run}", "runs/adhoc/report.html"),
               ("{run} --format md --output {place}/report.md", "report.md")],
    "compare": [("{place}/runs/adhoc {run}", None)],
    "export": [("{run}", "runs/adhoc/export/trials.csv"),
               ("{run} --output {place}/tables", "tables/trials.csv")],
    "collectors": [("", None)],
    "doctor": [("--collect none", None)],
    "env": [("", None)],
    "history add": [("{run} --db {db}", "history.sqlite"),
                    ("{run} --db {place}/new.sqlite", "new.sqlite")],
    "history show": [("--db {place}/history.sqlite", None)],
    "history report": [("--db {db}", "history.html"),
                       ("--db {db} --output {place}/trend.html", "trend.html")],
}


def _commands(command: click.Command = cli, words: tuple[str, ...] = ()) -> Iterator[str]:
    if not isinstance(command, click.Group):
        yield " ".join(words)
        return
    ctx = click.Context(command)
    for name in command.list_commands(ctx):
        sub = command.get_command(ctx, name)
        assert sub is not None
        yield from _commands(sub, (*words, name))


COMMANDS = list(_commands())
PARAMS = [pytest.param(name, args, writes, id=f"{name}-{n}")
          for name in COMMANDS for n, (args, writes) in enumerate(CASES.get(name, [("", None)]))]
# Reading a history database on a read-only or full disk is history's own rule (issue 24,
# "History takes only what it can trust"), fixed with the database code, not here.
def test_every_command_has_a_row() -> None:
    assert sorted(CASES) == sorted(COMMANDS), "give each command of `aorta` its arguments"


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding a finished run (`runs/adhoc`) and a history database with it."""
    place = tmp_path_factory.mktemp("template")
    for args in (f"sweep run --output {place}/runs {PASS}",
                 f"history add {place}/runs/adhoc --db {place}/history.sqlite"):
        done = run_aorta(*args.split())
        assert done.returncode == 0, done.stderr
    return place


def _argv(name: str, args: str, place: Path, inputs: Path | None = None) -> list[str]:
    inputs = inputs or place
    fill = {"place": str(place), "run": f"{inputs}/runs/adhoc", "db": f"{inputs}/history.sqlite"}
    return [*name.split(), *(word.format(**fill) for word in args.split())]


def _files(place: Path) -> dict[str, bytes]:
    return {str(p.relative_to(place)): p.read_bytes() for p in place.rglob("*") if p.is_file()}


def _remount_read_only(mount: Path) -> None:
    done = subprocess.run(["mount", "-o", "remount,ro", str(mount)], capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot remount a tmpfs read-only here ({done.stderr.strip()})")


def _fill(mount: Path) -> None:
    with open(mount / "filler", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass


@contextmanager
def _place(kind: str, template: Path, tmp_path: Path, writes: str | None) -> Iterator[Path]:
    """The folder under test, holding a copy of `template`, made as `kind` says."""
    if kind in UNREACHABLE:
        shutil.copytree(template, tmp_path / "inputs")
        (tmp_path / "plain").write_text("a regular file\n")
        yield tmp_path / UNREACHABLE[kind] / "under"
        return
    if kind == "directory in the way":
        place = shutil.copytree(template, tmp_path / "place")
        assert writes is not None
        shutil.rmtree(place / writes, ignore_errors=True)
        (place / writes).unlink(missing_ok=True)
        (place / writes).mkdir(parents=True)
        (place / writes / "kept").write_text("kept\n")
        yield place
        return
    with small_filesystem(tmp_path / "mount", "8m") as mount:
        shutil.copytree(template, mount, dirs_exist_ok=True)
        if kind == "read-only":
            _remount_read_only(mount)
        else:
            _fill(mount)
        yield mount


UNREACHABLE = {"under a regular file": "plain", "a name too long": "x" * 300}
KINDS = ["read-only", "full", *UNREACHABLE, "directory in the way"]
_baseline: dict[tuple[str, str], int] = {}


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize(("name", "args", "writes"), PARAMS)
def test_a_refusing_filesystem_is_one_line(kind: str, name: str, args: str,
                                           writes: str | None, template: Path,
                                           tmp_path: Path, request: pytest.FixtureRequest
                                           ) -> None:
    if kind == "directory in the way" and writes is None:
        pytest.skip(f"`aorta {name}` writes no file")
    if kind == "directory in the way" and f"{{place}}/{writes}" in args:
        pytest.skip("a directory given as a file option is refused by click, as usage")
    if kind in UNREACHABLE and "{place}" not in args:
        pytest.skip(f"`aorta {name}` is given no path there")
    with _place(kind, template, tmp_path, writes) as place:
        unreachable = kind in UNREACHABLE
        before = {} if unreachable else _files(place)
        argv = _argv(name, args, place, tmp_path / "inputs" if unreachable else None)
        done = run_aorta(*argv, cwd=tmp_path if unreachable else place)
        after = {} if unreachable else _files(place)
    where = f"aorta {' '.join(argv)}"
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, \
        f"{where}\n{done.stderr}"
    assert set(before) <= set(after), f"{where}: lost {sorted(set(before) - set(after))}"
    if kind == "directory in the way":   # a resume rewrites the run's summaries, never a record
        before = {k: v for k, v in before.items() if "/cells/" in k}
    assert {k: after[k] for k in before} == before, f"{where}: a file was changed"
    if writes is None and kind in ("read-only", "full"):
        key = (name, args)
        if key not in _baseline:
            _baseline[key] = run_aorta(*_argv(name, args, template), cwd=template).returncode
        assert done.returncode == _baseline[key], f"{where}\n{done.stderr}"
        return
    if writes is None and done.returncode == 0:   # `sweep plan` writes nothing: nothing to refuse
        return
    assert done.returncode == 2, f"{where}\n{done.stderr}"
    errors = [line for line in done.stderr.splitlines() if line.startswith("aorta: error:")]
    named = place.parent if unreachable else place / writes if writes and kind == KINDS[-1] \
        else place
    assert len(errors) == 1 and str(named) in errors[0], f"{where}\n{done.stderr}"
    assert done.stderr.rstrip("\n").splitlines()[-1] == errors[0], done.stderr


def test_the_api_raises_the_command_message(template: Path, tmp_path: Path) -> None:
    import aorta
    from aorta.base.errors import FilesystemError

    with _place("read-only", template, tmp_path, None) as place:
        done = run_aorta(*_argv("sweep run", CASES["sweep run"][1][0], place))
        with pytest.raises(FilesystemError) as raised:
            aorta.sweep(command=[sys.executable, "-c", "pass"], output=place / "new",
                        collect="none", trials=2)
    assert done.stderr.strip() == f"aorta: error: {raised.value}"
    assert f"{place}/new: the filesystem is read-only; choose a writable --output" in \
        str(raised.value)
