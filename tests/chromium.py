"""Debian's headless Chromium driven by Playwright for Python, for the browser tests
(tests/browser/): how it starts on a machine whose network is closed, where screenshots go.

Never `playwright install`: nothing downloads a browser (`make browser` installs Debian's).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from webpage import WebPage

CHROMIUM = "/usr/bin/chromium"
#: what a headless Chromium needs on a machine whose network is closed (docs/web.md)
CHROMIUM_ARGS = [
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(
    os.environ.get("ALP_TEST_ARTIFACTS") or Path(__file__).resolve().parents[1] / "test-artifacts"
)
TIMEOUT_MS = 30_000


def sync_playwright() -> Any:
    try:
        from playwright.sync_api import sync_playwright as start
    except ImportError:
        pytest.skip("playwright is not installed (make install: it is a dev dependency)")
    if not shutil.which(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (make browser installs Debian's chromium)")
    return start()


@contextmanager
def chromium_page(width: int = 1100, height: int = 900) -> Iterator[Any]:
    """A page of a fresh headless Chromium (closed on leaving)."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            page = context.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            yield page
        finally:
            browser.close()


def screenshot(page: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def log_in(page: Any, web: WebPage) -> None:
    page.goto(web.login_url)
    assert page.url == web.url
