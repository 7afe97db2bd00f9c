"""What every page must pass in the browser: it loads with no console error and no request
but its own file, every SVG plot has a non-zero size, and every relative link exists."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit


@dataclass
class Loaded:
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    svg_sizes: list[tuple[float, float]] = field(default_factory=list)
    hrefs: list[str] = field(default_factory=list)
    title: str = ""


def load(context: Any, page_file: Path) -> Loaded:
    found = Loaded()
    page = context.new_page()
    try:
        page.on("console", lambda m: found.console_errors.append(m.text)
                if m.type == "error" else None)
        page.on("pageerror", lambda e: found.console_errors.append(str(e)))
        page.on("request", lambda r: found.requests.append(r.url))
        page.goto(page_file.resolve().as_uri(), wait_until="load")
        page.wait_for_load_state("networkidle")
        found.title = page.title()
        for svg in page.query_selector_all("svg"):
            box = svg.bounding_box()
            found.svg_sizes.append((box["width"], box["height"]) if box else (0.0, 0.0))
        found.hrefs = page.eval_on_selector_all("a[href]", "els => els.map(e => "
                                                "e.getAttribute('href'))")
    finally:
        page.close()
    return found


def assert_clean(found: Loaded, page_file: Path, min_plots: int) -> None:
    assert found.console_errors == [], found.console_errors
    assert found.requests == [page_file.resolve().as_uri()], found.requests
    assert len(found.svg_sizes) >= min_plots
    assert all(w > 0 and h > 0 for w, h in found.svg_sizes), found.svg_sizes
    missing = []
    for href in found.hrefs:
        parts = urlsplit(href)
        if parts.scheme or href.startswith("#"):
            assert parts.scheme in ("", "file"), f"link leaves the page: {href}"
            continue
        if not (page_file.parent / unquote(parts.path)).exists():
            missing.append(href)
    assert missing == [], f"links to nothing: {missing}"
