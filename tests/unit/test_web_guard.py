"""The page's checks (alpd.web.guard) as pure functions: Host, cookie, Origin, headers."""

from __future__ import annotations

import string

from hypothesis import given
from hypothesis import strategies as st

from alpd.web.guard import (
    COOKIE,
    LOGIN_PATH,
    cookie_value,
    expected_host,
    expected_origin,
    refusal,
    security_headers,
)

TOKEN = "t0ken-value"
PORT = 43210
GOOD = {"host": f"127.0.0.1:{PORT}", "cookie": f"{COOKIE}={TOKEN}"}


def test_a_request_with_host_and_cookie_passes() -> None:
    assert refusal("GET", "/", GOOD, TOKEN, PORT) is None


def test_a_post_from_the_page_itself_passes() -> None:
    headers = {**GOOD, "origin": f"http://127.0.0.1:{PORT}"}
    assert refusal("POST", "/t/x/push", headers, TOKEN, PORT) is None


@given(st.text(alphabet=string.printable, max_size=40))
def test_any_other_host_is_refused_before_anything_else(host: str) -> None:
    if host == expected_host(PORT):
        return
    found = refusal("GET", "/", {**GOOD, "host": host}, TOKEN, PORT)
    assert found is not None and found.status == 421


def test_localhost_and_other_ports_are_foreign_hosts() -> None:
    for host in (f"localhost:{PORT}", "127.0.0.1", f"127.0.0.1:{PORT + 1}", f"evil.test:{PORT}"):
        found = refusal("GET", "/", {**GOOD, "host": host}, TOKEN, PORT)
        assert found is not None and found.status == 421, host


@given(st.text(alphabet=string.ascii_letters + string.digits + "-_", max_size=50))
def test_a_wrong_or_missing_token_is_401(presented: str) -> None:
    if presented == TOKEN:
        return
    for headers in ({**GOOD, "cookie": f"{COOKIE}={presented}"}, {"host": GOOD["host"]}):
        found = refusal("GET", "/static/alp.css", headers, TOKEN, PORT)
        assert found is not None and found.status == 401


def test_login_is_left_to_its_own_code_check() -> None:
    assert refusal("GET", LOGIN_PATH, {"host": GOOD["host"]}, TOKEN, PORT) is None


def test_a_change_from_another_origin_or_none_is_403() -> None:
    for origin in ("http://evil.test", f"http://localhost:{PORT}", "null", None):
        headers = dict(GOOD) if origin is None else {**GOOD, "origin": origin}
        found = refusal("POST", "/t/x/continue", headers, TOKEN, PORT)
        assert found is not None and found.status == 403, origin
    assert expected_origin(PORT) == f"http://127.0.0.1:{PORT}"


def test_cookie_value_reads_the_named_cookie_among_others() -> None:
    assert cookie_value(f"a=1; {COOKIE}=abc; b=2", COOKIE) == "abc"
    assert cookie_value("a=1", COOKIE) is None
    assert cookie_value(None, COOKIE) is None
    assert cookie_value(f"{COOKIE}x=abc", COOKIE) is None


def test_private_pages_are_never_cached_and_never_framed() -> None:
    headers = dict(security_headers("/t/x"))
    assert headers[b"cache-control"] == b"no-store"
    assert headers[b"x-frame-options"] == b"DENY"
    csp = headers[b"content-security-policy"].decode()
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert "frame-ancestors 'none'" in csp
    assert dict(security_headers("/static/alp.js"))[b"cache-control"] != b"no-store"
