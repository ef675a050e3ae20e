"""The web page in a real headless Chromium (Debian's, driven by Playwright for Python).

A person logs in through the one-time URL, finds the thread they made with `alp`, continues
it headless and watches the root go from running to completed without reloading, meets a
named error, searches and opens a hit, pauses a schedule. Screenshots go to
`test-artifacts/` (or $ALP_TEST_ARTIFACTS): the README shows one of them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import chromium_page, log_in, screenshot
from polling import wait_for
from webpage import open_page

from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.browser


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    release = tmp_path / "release"
    config = tmp_path / "config.toml"
    config.write_text(
        "[agents.blocker]\n"
        'runtime = "command"\n'
        f'args = ["sh", "-c", "while [ ! -f {release} ]; do sleep 0.05; done; echo released"]\n'
    )
    with running_daemon(tmp_path, extra_args=["--config", str(config)]) as started:
        yield started


@pytest.fixture
def browser_page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def cli_json(daemon: DaemonProcess, *args: str) -> Any:
    done = daemon.cli("--json", *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def test_log_in_continue_and_watch_the_root_complete_without_a_reload(
    daemon: DaemonProcess, browser_page: Any, tmp_path: Path
) -> None:
    page = browser_page
    thread = cli_json(daemon, "thread", "create", "--title", "made from the CLI")
    web = open_page(daemon)
    log_in(page, web)
    page.get_by_role("link", name="made from the CLI").wait_for()
    page.wait_for_selector("#connection.live")
    screenshot(page, "threads")

    page.get_by_role("link", name="made from the CLI").click()
    page.wait_for_url(f"{web.url}t/{thread['id']}")
    page.fill("#prompt", "wait for the release file")
    page.fill("input[name=agent]", "blocker")
    # the composer sends without leaving the page, and says what it started
    page.get_by_role("button", name="Continue").click()
    page.wait_for_selector("#composer-result:has-text('Continued: root #1')")
    assert page.url == f"{web.url}t/{thread['id']}"
    page.wait_for_selector(".root [data-status=running]")
    page.wait_for_selector("#connection.live")
    # a mark in this document: a reload would lose it
    page.evaluate("window.alpNotReloaded = true")
    screenshot(page, "thread-running")

    (tmp_path / "release").write_text("go\n")
    page.wait_for_selector(".root [data-status=completed]")
    assert page.evaluate("window.alpNotReloaded") is True
    assert int(page.evaluate("document.body.dataset.refreshed")) >= 1
    assert "made from the CLI" in page.title()
    screenshot(page, "thread-completed")


def test_a_named_error_is_shown_in_the_page(daemon: DaemonProcess, browser_page: Any) -> None:
    page = browser_page
    thread = cli_json(daemon, "thread", "create", "--title", "error shown")
    web = open_page(daemon)
    log_in(page, web)
    page.goto(f"{web.url}t/{thread['id']}")
    page.fill("#prompt", "go")
    page.fill("input[name=agent]", "no-such-agent")
    page.get_by_role("button", name="Continue").click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    assert "AGENT_NOT_FOUND" in alert.inner_text()
    assert page.input_value("#prompt") == "go"


def test_search_and_open_a_hit(daemon: DaemonProcess, browser_page: Any) -> None:
    page = browser_page
    thread = cli_json(daemon, "thread", "create", "--title", "quarterly zebra migration")
    # A title reaches the search index with the history sync's next pass, not with the
    # create; the page searches once, so it must not ask before that pass.
    wait_for(lambda: cli_json(daemon, "search", "zebra")["hits"], what="the title indexed")
    web = open_page(daemon)
    log_in(page, web)
    page.get_by_role("link", name="Search").click()
    page.fill("input[name=q]", "zebra")
    page.get_by_role("button", name="Search").click()
    hit = page.locator(".hit a.title").first
    hit.wait_for()
    assert page.locator(".hit mark").first.inner_text().lower() == "zebra"
    screenshot(page, "search")
    hit.click()
    page.wait_for_url(f"{web.url}t/{thread['id']}*")
    assert page.locator("h1").inner_text() == "quarterly zebra migration"


def test_pause_and_resume_a_schedule(daemon: DaemonProcess, browser_page: Any) -> None:
    page = browser_page
    thread = cli_json(daemon, "thread", "create", "--title", "nightly")
    cli_json(
        daemon,
        "schedule",
        "add",
        thread["id"],
        "--every",
        "1h",
        "--agent",
        "blocker",
        "--",
        "check",
    )
    web = open_page(daemon)
    log_in(page, web)
    page.get_by_role("link", name="Schedules").click()
    page.get_by_role("button", name="Pause").click()
    page.get_by_role("button", name="Resume").wait_for()
    assert cli_json(daemon, "schedule", "list")["schedules"][0]["status"] == "paused"
    page.get_by_role("button", name="Resume").click()
    page.get_by_role("button", name="Pause").wait_for()


def test_the_pages_are_readable_at_phone_width(daemon: DaemonProcess, browser_page: Any) -> None:
    page = browser_page
    thread = cli_json(daemon, "thread", "create", "--title", "on a phone")
    web = open_page(daemon)
    page.set_viewport_size({"width": 375, "height": 740})
    log_in(page, web)
    for path in ("", f"t/{thread['id']}", "ps", "schedules", "search"):
        page.goto(f"{web.url}{path}")
        overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, (path, overflow)
        if path.startswith("t/"):
            screenshot(page, "phone-thread")


def test_confirm_an_inbox_item(daemon: DaemonProcess, browser_page: Any, tmp_path: Path) -> None:
    page = browser_page
    cli_json(daemon, "thread", "create", "--title", "monitor")
    trading = cli_json(daemon, "thread", "create", "--title", "trading")
    (tmp_path / "release").write_text("go\n")
    cli_json(daemon, "thread", "continue", trading["id"], "--agent", "blocker", "--headless",
             "--prompt", "first")  # fmt: skip
    held = cli_json(daemon, "handoff", "trading", "--directive", "--from", "monitor", "--",
                    "Sell at 42: the threshold broke")["handoff"]  # fmt: skip
    web = open_page(daemon)
    log_in(page, web)
    page.get_by_role("link", name="Inbox").click()
    item = page.locator(f"#item-{held['id']}")
    item.wait_for()
    assert "Sell at 42" in item.inner_text()
    screenshot(page, "inbox")
    item.get_by_role("button", name="Confirm").click()
    page.get_by_text("Nothing waits").wait_for()
    assert cli_json(daemon, "inbox")["items"] == []


class _CookieCatcher:
    """Another local server on 127.0.0.1 (any program of any user may run one): it records
    the Cookie header of every request it gets."""

    def __init__(self) -> None:
        import http.server
        import threading

        seen: list[str] = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                seen.append(self.headers.get("Cookie") or "")
                body = b"<!doctype html><title>other</title><p>another local server</p>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.seen = seen
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_the_login_cookie_never_reaches_another_local_server(
    daemon: DaemonProcess, browser_page: Any
) -> None:
    """Browsers do not scope cookies by port: a cookie set by a page on 127.0.0.1 goes to
    every server on 127.0.0.1. alp's page lives on an address of 127.0.0.0/8 of its own, so
    the other server gets no alp_web (and a replayed one would open nothing anyway)."""
    web = open_page(daemon)
    log_in(browser_page, web)
    own = [c for c in browser_page.context.cookies() if c["name"].startswith("alp_web")]
    assert own, "the login set no cookie"
    other = _CookieCatcher()
    try:
        browser_page.goto(f"http://127.0.0.1:{other.port}/")
        assert "another local server" in browser_page.content()
        browser_page.goto(f"http://localhost:{other.port}/")
    finally:
        other.close()
    assert other.seen, "the other server was not visited"
    for header in other.seen:
        assert "alp_web" not in header, header
    for cookie in own:
        assert cookie["domain"] != "127.0.0.1", cookie
    # the page itself still knows its visitor
    browser_page.goto(web.url)
    assert browser_page.url.startswith(web.url) and "login" not in browser_page.url
