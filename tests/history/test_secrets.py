"""A password in a --db URL is never printed, written into a page, or stored."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import MetaData, select

from aorta.cli import main
from aorta.base.errors import UserError
from aorta.history.db import open_history, redact, resolve_url, transaction
from history_helpers import PG_PASSWORD, POSTGRES_URL, series_runs


def test_redact_hides_password_and_password_parameters() -> None:
    url = resolve_url("postgresql://me:s3cret@db.example/hist?sslpassword=k3y&application_name=a")
    shown = redact(url)
    assert "s3cret" not in shown and "k3y" not in shown
    assert shown.startswith("postgresql+psycopg://me:***@db.example/hist")


def test_unparseable_url_is_refused_without_its_password() -> None:
    with pytest.raises(UserError) as caught:
        resolve_url("mysql+nothing://me:s3cret@host/db")
    assert "s3cret" not in str(caught.value)


def test_wrong_password_error_does_not_show_it(db_url: str) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("a password is a server's matter")
    wrong = POSTGRES_URL.replace(PG_PASSWORD, "wrong-pass-xyz")
    with pytest.raises(UserError) as caught:
        with open_history(wrong):
            pass
    assert "wrong-pass-xyz" not in str(caught.value)
    assert "***" in str(caught.value)


def test_password_never_reaches_output_page_or_database(db_url: str, tmp_path: Path) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite URLs carry no password")
    runs = series_runs(tmp_path, [1.0, 1.0, 1.0, 2.0, 2.0])
    runner = CliRunner()
    outputs = []
    for run in runs:
        outputs.append(runner.invoke(_cli(), ["history", "add", str(run), "--db", db_url]).output)
    page = tmp_path / "page.html"
    for args in (["show", "--db", db_url], ["show", "--db", db_url, "--metric", "wall_s"],
                 ["show", "--db", db_url, "--format", "json"],
                 ["report", "--db", db_url, "--output", str(page)]):
        result = runner.invoke(_cli(), ["history", *args])
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    assert all(PG_PASSWORD not in text for text in outputs)
    assert PG_PASSWORD not in page.read_text()
    with open_history(db_url) as db, transaction(db) as conn:
        meta = MetaData()
        meta.reflect(conn)
        for table in meta.sorted_tables:
            for row in conn.execute(select(table)):
                assert PG_PASSWORD not in repr(tuple(row))


def _cli():  # type: ignore[no-untyped-def]
    from aorta.cli.group import cli

    return cli


def test_main_prints_one_line_without_the_password(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["history", "show", "--db", "postgresql://me:s3cret@127.0.0.1:1/none"])
    err = capsys.readouterr().err
    assert code == 2 and "s3cret" not in err and err.count("\n") == 1
