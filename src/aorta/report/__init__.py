"""`aorta report`: one run directory read into plain data, then rendered as HTML, Markdown or
JSON. `write_report` writes the self-contained HTML page into the run directory."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path

from aorta.base.errors import doing
from aorta.base.redaction import PATTERN_ONLY
from aorta.rendering import json_text
from aorta.report.build import build_report
from aorta.report.html import render_html
from aorta.report.markdown import render_markdown
from aorta.report.model import Report
from aorta.store.files import write_anywhere
from aorta.store.run_dir import RunStore

__all__ = ["Report", "build_report", "render_html", "render_markdown", "render_json",
           "write_report", "write_html", "write_report_file", "REPORT_FILE"]

REPORT_FILE = "report.html"


def render_json(report: Report, run_dir: Path) -> str:
    """The `Report` record as strict JSON, with `run_dir` after its `schema_version`."""
    doc = asdict(report)
    return json_text({"schema_version": doc.pop("schema_version"), "run_dir": str(run_dir),
                      **doc}) + "\n"


def write_report(run_dir: Path) -> Path:
    """Write `<run_dir>/report.html` (replacing an older one) and return its path. Raises
    `RunDirError` when `run_dir` is not a run directory, `FilesystemError` when it cannot
    write (an older report stays whole)."""
    return write_html(build_report(run_dir), run_dir, run_dir / REPORT_FILE)


def write_html(report: Report, run_dir: Path, target: Path) -> Path:
    """Write the page to `target`, its artifact links pointing at `run_dir` from there."""
    base = os.path.relpath(run_dir.resolve(), target.resolve().parent).replace(os.sep, "/")
    link_base = "" if base == "." else base + "/"
    write_report_file(run_dir, target, render_html(report, link_base))
    return target


def write_report_file(run_dir: Path, target: Path, text: str) -> None:
    """Into the run directory through its store (confined), elsewhere where the user asked;
    credential shapes are scrubbed either way."""
    text = PATTERN_ONLY.text(text)
    with doing("writing the report", "--output"):
        if target.parent.resolve() == run_dir.resolve():
            RunStore(run_dir.resolve()).write_text(target.name, text)   # the path the user gave
        else:
            write_anywhere(target, text)
