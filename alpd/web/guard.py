"""Who may talk to the page: every request passes these checks before any route sees it.

In order, the first that fails answers:

1. `Host` must be exactly `ADDRESS:PORT`, the address the page listens on (the home's own
   in 127.0.0.0/8, alpd.web.address; 127.0.0.1 where there is no other). A web site
   that rebinds its own name to 127.0.0.1 (DNS rebinding) reaches our port, but its
   requests carry its own name in `Host`: refused with 421 before anything is read.
2. The cookie must carry the token, except on `/login`, which checks its one-time code
   itself. Without it: 401, on every route, static files included.
3. A state-changing method (anything but GET and HEAD) must come with `Origin` equal to
   `http://ADDRESS:PORT`: a form on another site posting here is refused with 403 even
   though SameSite=Strict already keeps our cookie off it.

Every answer, refusals included, carries the security headers: a CSP that allows scripts,
styles and connections from the page itself only (no inline script), no framing, no
sniffing, no referrer to other sites, and `Cache-Control: no-store` on everything but the
static files, and `Server-Timing: app;dur=MS` (the time until the answer's headers: for a
page, all of its rendering). The checks are pure functions of the request's method, path and headers
(`refusal`); the ASGI middleware around them is thin.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Final

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from alpd.web.login import token_matches

COOKIE: Final = "alp_web"
SAFE_METHODS: Final = frozenset({"GET", "HEAD"})
LOGIN_PATH: Final = "/login"
STATIC_PREFIX: Final = "/static/"

CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
_COMMON_HEADERS: Final = (
    (b"content-security-policy", CSP.encode()),
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    # not `no-referrer`: under it a browser sends `Origin: null` with a form's POST, and
    # the Origin check (3.) would refuse the page's own forms
    (b"referrer-policy", b"same-origin"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


@dataclass(frozen=True, slots=True)
class Refusal:
    status: int
    reason: str


def expected_host(port: int, address: str = "127.0.0.1") -> str:
    return f"{address}:{port}"


def expected_origin(port: int, address: str = "127.0.0.1") -> str:
    return f"http://{expected_host(port, address)}"


def cookie_value(header: str | None, name: str) -> str | None:
    """The value of cookie `name` in a `Cookie` header (the first, as browsers send)."""
    if not header:
        return None
    for part in header.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name:
            return value
    return None


def refusal(
    method: str,
    path: str,
    headers: Mapping[str, str],
    token: str,
    port: int,
    address: str = "127.0.0.1",
) -> Refusal | None:
    """Why this request may not pass, or None."""
    host = expected_host(port, address)
    if headers.get("host") != host:
        return Refusal(421, "this page answers only to its own address, " + host)
    if path != LOGIN_PATH and not token_matches(cookie_value(headers.get("cookie"), COOKIE), token):
        return Refusal(401, "not logged in: run `alp web` and open the login URL it prints")
    if method not in SAFE_METHODS and headers.get("origin") != expected_origin(port, address):
        return Refusal(403, "a change must come from the page itself (Origin does not match)")
    return None


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    caching = b"private, max-age=300" if path.startswith(STATIC_PREFIX) else b"no-store"
    return [*_COMMON_HEADERS, (b"cache-control", caching)]


class Guard:
    """ASGI middleware applying `refusal` and `security_headers` to every HTTP request."""

    def __init__(
        self,
        app: ASGIApp,
        token: Callable[[], str],
        port: Callable[[], int],
        address: Callable[[], str] = lambda: "127.0.0.1",
    ) -> None:
        self.app = app
        self._token = token
        self._port = port
        self._address = address

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        extra = security_headers(path)
        started = time.perf_counter()

        async def send_secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                names = {name for name, _ in extra}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in names]
                took = f"app;dur={(time.perf_counter() - started) * 1000:.1f}".encode()
                message = {**message, "headers": [*kept, *extra, (b"server-timing", took)]}
            await send(message)

        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        refused = refusal(
            scope["method"], path, headers, self._token(), self._port(), self._address()
        )
        if refused is None:
            await self.app(scope, receive, send_secured)
            return
        body = f"{refused.status} {refused.reason}\n".encode()
        await send_secured(
            {
                "type": "http.response.start",
                "status": refused.status,
                "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                ],
            }
        )
        await send_secured({"type": "http.response.body", "body": body})
