"""A real headless browser for the pages people look at: Debian's chromium driven by
Playwright (never a downloaded browser). Without either, these tests skip and say why."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = os.environ.get("AORTA_TEST_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


@pytest.fixture(scope="session")
def browser_context() -> Iterator[Any]:
    """A persistent context on a fresh user-data-dir, closed and removed after the session."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install playwright; the browser is "
                    "Debian's chromium, never downloaded)")
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)):
        pytest.skip(f"{CHROMIUM} not found (apt-get install chromium)")
    profile = tempfile.mkdtemp(prefix="aorta-chromium-")
    try:
        with sync_playwright() as p:
            context = p.chromium.launch_persistent_context(
                profile, executable_path=CHROMIUM, args=ARGS, headless=True,
                viewport={"width": 1280, "height": 900})
            try:
                yield context
            finally:
                context.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)
