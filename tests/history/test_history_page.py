"""The history page (`aorta history report`) and `history show` over the runs shown: plots
before the table of steps, axes labelled with commits and dates, no text past a plot's edge,
kernel series with too few runs left out and counted, and a page bounded in size on a long
history unless every run is asked for."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from aorta.history.db import open_history, transaction
from aorta.history.schema import CONTEXTS, KERNELS, RUNS, SAMPLES
from aorta.rendering.trend import CHAR_WIDTH, title_lines
from aorta_testing import run_aorta
from history_helpers import series_runs

_SVG = re.compile(r"<svg .*?</svg>", re.S)
_SIZE = re.compile(r"font-size:(\d+)px")


def _long_history(path: Path, runs: int) -> str:
    """`runs` runs written through the store's tables: wall_s steps up 20% at 70% of them, two
    kernels every run calls and one whose name changes with every run."""
    with open_history(str(path)) as db, transaction(db, write=True) as conn:
        context = conn.execute(CONTEXTS.insert().values(
            key="k", recipe="recipe.yaml", host="ci", gpu="none", collect="{}")
            .returning(CONTEXTS.c.id)).scalar_one()
        for n in range(runs):
            when = f"2026-{1 + n // 600:02d}-{1 + n // 24 % 25:02d}T{n % 24:02d}:00:00+00:00"
            run_id = conn.execute(RUNS.insert().values(
                uid=str(n), context_id=context, name=f"run{n:04d}", command='["python"]',
                created_at=when, recorded_at=when, status="complete", commit_sha=f"{n:040x}",
                trials_passed=2, trials_total=2).returning(RUNS.c.id)).scalar_one()
            level = 1.2 if n >= runs * 0.7 else 1.0
            conn.execute(SAMPLES.insert(), [
                {"run_id": run_id, "cell": "c", "metric": "wall_s", "trial": t,
                 "value": level * (1 + 0.01 * t)} for t in range(2)])
            conn.execute(KERNELS.insert(), [
                {"run_id": run_id, "cell": "c", "source": "cprofile_functions", "name": name,
                 "trial": t, "total_ms": ms, "calls": 1}
                for t in range(2) for name, ms in ((f"<built-in method at 0x{n:x}>", 99.0),
                                                   ("work.py:3(matmul)", 50.0 + t),
                                                   ("work.py:9(add)", 20.0 + t))])
    return str(path)


def _svgs(page: str) -> list[ET.Element]:
    return [ET.fromstring(svg) for svg in _SVG.findall(page)]


def _assert_text_inside(svg: ET.Element) -> None:
    """Every text's extent, from its anchor, length and monospace size, is inside the SVG."""
    width = float(svg.get("width", 0))
    for text in svg.iter("text"):
        content = "".join(text.itertext())
        size = int(_SIZE.search(text.get("style", "")).group(1))    # type: ignore[union-attr]
        extent = len(content) * CHAR_WIDTH[size]
        x = float(text.get("x", 0))
        start = {"end": x - extent, "middle": x - extent / 2}.get(text.get("text-anchor", ""), x)
        assert 0 <= start and start + extent <= width, (content, start, extent, width)


def test_plots_come_first_with_commit_ticks_and_a_compact_steps_table(tmp_path: Path) -> None:
    runs = series_runs(tmp_path / "runs", [1.0] * 5 + [1.6] * 3)
    db = str(tmp_path / "h.sqlite")
    assert run_aorta("history", "add", *map(str, runs), "--db", db).returncode == 0
    done = run_aorta("history", "report", "--db", db)
    assert done.returncode == 0, done.stderr
    page = (tmp_path / "history.html").read_text()
    assert page.index("<svg ") < page.index('id="steps"')
    assert "runs 1-8 of 8" in page
    svgs = _svgs(page)
    assert len(svgs) == 4
    for svg in svgs:
        _assert_text_inside(svg)
        ticks = [t.text for t in svg.iter("text") if t.text and re.fullmatch(
            r"\d\d-\d\d \d\d:\d\d", t.text)]
        assert len(ticks) >= 3, ticks         # more than the first and the last run
        assert svg.find("line[@class='change']") is not None or "wall_s" not in svg.get(
            "aria-label", "")
    table = page[page.index('id="steps"'):]
    assert table.count("<tr class=\"reg\">") == 2                 # wall_s and cpu_user_s
    assert table.count("python3 bench.py") == 2                   # each run described once


@pytest.mark.parametrize("title", [
    "cprofile_functions:examples/quickstart/matmul.py:16(matmul_naive) (ms)",
    "proton_kernels:void at::native::vectorized_elementwise_kernel<4, at::native::"
    "FillFunctor<float>, at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1>) (ms)",
    "x" * 300,
])
def test_titles_fit_in_two_lines(title: str) -> None:
    lines = title_lines(title)
    assert 1 <= len(lines) <= 2
    assert all(len(line) * CHAR_WIDTH[11] <= 370 - 8 for line in lines)
    assert lines[0] == title[:len(lines[0])]


def test_a_long_history_shows_the_newest_runs_and_says_so(tmp_path: Path) -> None:
    db = _long_history(tmp_path / "h.sqlite", 1000)
    page = tmp_path / "page.html"
    done = run_aorta("history", "report", "--db", db, "--output", str(page))
    assert done.returncode == 0, done.stderr
    text = page.read_text()
    assert len(text) < 400_000, len(text)
    assert "runs 801-1,000 of 1,000" in text and "--all-runs" in text
    assert "200 kernel series not plotted: each ran in fewer than 5 of the runs shown" in text
    assert len(_svgs(text)) == 3         # wall_s and the two kernels every run calls
    for svg in _svgs(text):
        _assert_text_inside(svg)

    assert run_aorta("history", "report", "--db", db, "--output", str(page),
                     "--all-runs").returncode == 0
    everything = page.read_text()
    assert "runs 1-1,000 of 1,000" in everything and len(everything) > 3 * len(text)

    shown = run_aorta("history", "show", "--db", db, "--metric", "wall_s", "--runs", "10")
    assert shown.returncode == 0, shown.stderr
    assert "runs 991-1,000 of 1,000" in shown.stdout
    assert len(re.findall(r"^\s+\d+\s+0{10}\s", shown.stdout, re.M)) == 10

    listing = run_aorta("history", "show", "--db", db)
    assert "200 kernel series left out: each ran in fewer than 5" in listing.stdout
    assert "0x" not in listing.stdout                     # no one-run start-up series

    doc = json.loads(run_aorta("history", "show", "--db", db, "--metric", "wall_s",
                               "--format", "json").stdout)
    assert doc["runs_shown"] == 200
    assert doc["series"][0]["points_left_out"] == 800 and len(doc["series"][0]["points"]) == 200
