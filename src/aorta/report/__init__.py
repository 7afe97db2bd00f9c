"""`aorta report`: one run directory read into plain data, then rendered as HTML, Markdown or
JSON. `write_report` writes the self-contained HTML page into the run directory."""

from __future__ import annotations

import os
from pathlib import Path

from aorta.report.build import build_report
from aorta.report.html import render_html
from aorta.report.json_doc import render_json
from aorta.report.markdown import render_markdown
from aorta.report.model import Report
from aorta.results import atomic_write_text

__all__ = ["Report", "build_report", "render_html", "render_markdown", "render_json",
           "write_report", "write_html", "REPORT_FILE"]

REPORT_FILE = "report.html"


def write_report(run_dir: Path) -> Path:
    """Write `<run_dir>/report.html` (replacing an older one) and return its path.

    Reads only the run's files. Raises `RunDirError` when `run_dir` is not a run directory,
    `OSError` when the page cannot be written."""
    return write_html(build_report(run_dir), run_dir, run_dir / REPORT_FILE)


def write_html(report: Report, run_dir: Path, target: Path) -> Path:
    """Write the page to `target`, its artifact links pointing at `run_dir` from there."""
    base = os.path.relpath(run_dir.resolve(), target.resolve().parent).replace(os.sep, "/")
    link_base = "" if base == "." else base + "/"
    atomic_write_text(target, render_html(report, link_base))
    return target
