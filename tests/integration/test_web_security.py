"""The web page lets nobody else in: no cookie is 401 on every route, a foreign Host and a
cross-origin change are refused, the token is in no file, and the port is on 127.0.0.1 only."""

from __future__ import annotations

import errno
import json
import socket
from pathlib import Path
from typing import Any

import psutil
import pytest
from polling import wait_for
from starlette.routing import Mount, Route
from webpage import WebPage, open_page

from alpd.events import EventBus
from alpd.testing.daemon import DaemonProcess, running_daemon
from alpd.web.app import routes
from alpd.web.stream import EventStreams

STATIC_FILES = ("/static/alp.css", "/static/alp.js", "/static/conversation.js")


def every_route() -> list[tuple[str, str]]:
    """(method, path) of every route the app has, path parameters filled in."""
    found: list[tuple[str, str]] = [("GET", "/login"), ("GET", "/login?code=guess")]
    for route in routes(door=None, streams=EventStreams(EventBus())):  # type: ignore[arg-type]
        if isinstance(route, Mount):
            found += [("GET", path) for path in STATIC_FILES]
            continue
        assert isinstance(route, Route)
        path = route.path.replace("{thread_id}", "thread_x").replace("{schedule_id}", "sch_x")
        path = path.replace("{item_id}", "hnd_x")
        found += [(method, path) for method in sorted(route.methods or ()) if method != "HEAD"]
    return found


@pytest.fixture
def page(alpd: DaemonProcess) -> WebPage:
    return open_page(alpd)


def test_the_route_list_covers_pages_actions_events_and_static() -> None:
    paths = {path for _, path in every_route()}
    assert {"/", "/t/thread_x", "/search", "/ps", "/schedules", "/events"} <= paths
    assert {"/t/thread_x/continue", "/t/thread_x/push", *STATIC_FILES} <= paths
    assert {"/inbox", "/inbox/hnd_x/confirm", "/t/thread_x/clear", "/t/thread_x/undo"} <= paths


def test_without_the_cookie_every_route_is_401(page: WebPage) -> None:
    for method, path in every_route():
        for cookie in (None, "alp_web=wrong", "other=1"):
            answer = page.request(method, path, cookie=cookie, origin=page.origin)
            assert answer.status == 401, (method, path, cookie, answer)
            assert answer.headers["x-frame-options"] == "DENY"


def test_with_the_cookie_the_pages_answer_with_security_headers(
    alpd: DaemonProcess, page: WebPage
) -> None:
    cookie = page.log_in()
    pages = {"/": 200, "/ps": 200, "/schedules": 200, "/search?q=x": 200, "/t/thread_nope": 404}
    for path, status in pages.items():
        answer = page.request("GET", path, cookie=cookie)
        assert answer.status == status, (path, answer)
        assert answer.headers["cache-control"] == "no-store"
        assert answer.headers["x-frame-options"] == "DENY"
        assert "script-src 'self'" in answer.headers["content-security-policy"]
        assert "<script>" not in answer.body


def test_a_foreign_host_is_refused_even_with_the_cookie(page: WebPage) -> None:
    cookie = page.log_in()
    for host in (f"localhost:{page.port}", f"rebound.example:{page.port}", "127.0.0.1"):
        for method, path in (("GET", "/"), ("GET", "/events"), ("GET", "/login?code=x")):
            answer = page.request(method, path, host=host, cookie=cookie)
            assert answer.status == 421, (host, path, answer)


def test_a_cross_origin_post_is_refused(alpd: DaemonProcess, page: WebPage) -> None:
    cookie = page.log_in()
    created = json.loads(alpd.cli("thread", "create", "--title", "t", "--json").stdout)
    path = f"/t/{created['id']}/push"
    for origin in ("http://evil.example", f"http://localhost:{page.port}", None):
        answer = page.request("POST", path, cookie=cookie, origin=origin, form="text=hi")
        assert answer.status == 403, (origin, answer)
    shown = json.loads(alpd.cli("thread", "show", created["id"], "--json").stdout)
    assert shown["roots"] == []


def test_the_login_url_works_once_and_sets_a_strict_httponly_cookie(page: WebPage) -> None:
    path = page.login_url.removeprefix(page.url.rstrip("/"))
    first = page.request("GET", path)
    assert first.status == 303 and first.headers["location"] == "/"
    cookie = first.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/" in cookie
    assert page.request("GET", path).status == 401
    token = cookie.split(";")[0].split("=", 1)[1]
    assert len(token) >= 43
    assert page.request("GET", "/", cookie=f"alp_web={token}").status == 200


def test_the_token_is_in_no_file_a_run_could_read(alpd: DaemonProcess, page: WebPage) -> None:
    """The token lives in alpd's memory: nothing under the state home holds it (a run, being
    the user's, could read any file the user can), and `web/open` no longer names a file."""
    cookie = page.log_in()
    token = cookie.split("=", 1)[1].encode()
    for path in alpd.home.rglob("*"):
        if path.is_file() and not path.is_symlink() and path.suffix not in {".db", ".db-wal"}:
            assert token not in path.read_bytes(), path
    assert not (alpd.home / "web-token").exists()
    assert "tokenFile" not in json.loads(alpd.cli("web", "--json").stdout)


def test_the_port_listens_on_127_0_0_1_only(alpd: DaemonProcess, page: WebPage) -> None:
    listening = [
        c
        for c in psutil.Process(alpd.pid).net_connections(kind="inet")
        if c.status == psutil.CONN_LISTEN
    ]
    assert [(c.laddr.ip, c.laddr.port) for c in listening] == [(page.address, page.port)]
    assert page.address.startswith("127.") and not page.address.startswith("127.0.")
    for address in non_loopback_addresses():
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(5)
            code = probe.connect_ex((address, page.port))
        assert code == errno.ECONNREFUSED, (address, code)


def non_loopback_addresses() -> list[str]:
    """This machine's own addresses that are not loopback (link-local v6 needs a scope)."""
    found = []
    for addresses in psutil.net_if_addrs().values():
        for entry in addresses:
            if entry.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            if entry.address.startswith(("127.", "::1", "fe80")):
                continue
            found.append(entry.address)
    return found


def test_alp_web_again_keeps_the_page_and_makes_a_new_code(alpd: DaemonProcess) -> None:
    first, second = open_page(alpd), open_page(alpd)
    assert first.port == second.port and first.login_url != second.login_url
    again = json.loads(alpd.cli("web", "--json").stdout)
    assert again["started"] is False


def test_web_in_config_serves_from_start_on_its_port(tmp_path: Path) -> None:
    port = free_port()
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_text(f"[web]\nenabled = true\nport = {port}\n")
    with running_daemon(tmp_path) as daemon:
        page = wait_for_page(daemon, port)
        assert page.request("GET", "/").status == 401
        assert json.loads(daemon.cli("web", "--json").stdout)["started"] is False


def test_alpd_web_flag_serves_from_start(tmp_path: Path) -> None:
    with running_daemon(tmp_path, extra_args=["--web"]) as daemon:
        opened: dict[str, Any] = json.loads(daemon.cli("web", "--json").stdout)
        assert opened["started"] is False


def test_a_taken_port_is_web_unavailable_and_the_daemon_serves_on(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "web-address").write_text("127.33.0.7\n")  # the page's own, kept in the home
    with socket.socket() as taken:
        taken.bind(("127.33.0.7", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        (home / "config.toml").write_text(f"[web]\nport = {port}\n")
        with running_daemon(tmp_path) as daemon:
            done = daemon.cli("web", "--json")
            assert done.returncode == 1
            error = json.loads(done.stdout)["error"]
            assert error["name"] == "WEB_UNAVAILABLE" and str(port) in error["message"]
            assert daemon.cli("ping").returncode == 0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_page(daemon: DaemonProcess, port: int) -> WebPage:
    def listening() -> bool:
        if not (daemon.home / "web-address").exists():
            return False
        with socket.socket() as probe:
            return probe.connect_ex((address(), port)) == 0

    def address() -> str:
        return (daemon.home / "web-address").read_text().strip()

    wait_for(listening, what="the web page listening")
    return WebPage(f"http://{address()}:{port}/", "", port)
