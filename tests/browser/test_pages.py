"""The run report (`aorta report RUN`) and the history page, opened in headless Chromium."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from aorta.cli import main
from page_checks import assert_clean, load

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "history"))
from history_helpers import series_runs  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "report" / "h200-proton-softmax"


def _real_run(tmp_path: Path) -> Path:
    run = tmp_path / "h200-proton-softmax"
    shutil.copytree(FIXTURE, run)
    for trial in range(3):       # git keeps no empty directory; the run left these
        (run / "cells" / "bad" / f"trial_{trial}" / "proton").mkdir(exist_ok=True)
    return run


def test_run_report_in_the_browser(browser_context: Any, tmp_path: Path) -> None:
    run = _real_run(tmp_path)
    assert main(["report", str(run)]) == 0
    page = run / "report.html"
    found = load(browser_context, page)
    assert found.title.startswith("aorta report")
    assert_clean(found, page, min_plots=2)
    assert any(h.startswith("cells/") for h in found.hrefs)    # artifact links were checked


def test_report_written_elsewhere_links_back(browser_context: Any, tmp_path: Path) -> None:
    run = _real_run(tmp_path)
    page = tmp_path / "pages" / "softmax.html"
    assert main(["report", str(run), "--output", str(page)]) == 0
    assert_clean(load(browser_context, page), page, min_plots=2)


def test_history_page_in_the_browser(browser_context: Any, tmp_path: Path) -> None:
    runs = series_runs(tmp_path / "runs", [1.0] * 5 + [1.6] * 3)
    db = str(tmp_path / "h.sqlite")
    assert main(["history", "add", *map(str, runs), "--db", db]) == 0
    assert main(["history", "report", "--db", db]) == 0
    page = tmp_path / "history.html"
    found = load(browser_context, page)
    assert found.title == "aorta performance history"
    assert_clean(found, page, min_plots=4)


def test_compare_page_in_the_browser(browser_context: Any, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    """compare's page, on the report's skeleton (issue 25): clean, with its table styled."""
    run = _real_run(tmp_path)
    assert main(["compare", str(run), str(run), "--format", "html"]) == 0
    page = tmp_path / "compare.html"
    page.write_text(capsys.readouterr().out)
    found = load(browser_context, page)
    assert found.title == "aorta compare"
    assert_clean(found, page, min_plots=0)


def test_the_checks_catch_a_broken_page(browser_context: Any, tmp_path: Path) -> None:
    """The checks above are not vacuous: a script error, a request for another file, a
    zero-size plot and a dead link each fail them."""
    page = tmp_path / "broken.html"
    page.write_text('<!doctype html><html><head><title>x</title></head><body>'
                    '<svg width="0" height="0"></svg><a href="missing/file.txt">x</a>'
                    '<img src="other.png"><script>undefined_function()</script></body></html>')
    found = load(browser_context, page)
    assert found.console_errors and len(found.requests) == 2
    assert found.svg_sizes == [(0.0, 0.0)] and found.hrefs == ["missing/file.txt"]
    with pytest.raises(AssertionError):
        assert_clean(found, page, min_plots=1)
