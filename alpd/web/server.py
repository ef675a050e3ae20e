"""Serving the page inside alpd: uvicorn's `Server.serve()` as a task of the daemon's task
group, on the daemon's own event loop — no second process, no second database writer.

Off until `web/open` (what `alp web` calls), `alpd --web` or `[web] enabled = true` turns
it on. It binds loopback only, on `[web] port` or else a port the kernel picks, and keeps
it until the daemon stops. The address is the home's own in 127.0.0.0/8 (alpd.web.address),
so the login cookie goes to this page alone, not to every server on 127.0.0.1.
Starting makes a new token (alpd.web.login), so a cookie from a
previous daemon opens nothing; each `web/open` adds a one-time login code.

uvicorn is told to leave signals alone (the daemon owns SIGTERM/SIGINT/SIGHUP), to trust
no proxy headers (nothing may claim another client address or scheme), and to speak HTTP
through `GuardedH11Protocol` (alpd/web/connections.py): a whole request within 10 s of the
connect, idle keep-alive closed after 5 s, and a connection cap far below the descriptor
limit where the longest waiter for a request makes room, so a crowd of another user's idle
or slow connections neither exhausts alpd's descriptors nor keeps the owner's page out.
"""

from __future__ import annotations

import contextlib
import errno
import resource
import socket
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final

import anyio
import structlog
import uvicorn
from anyio.abc import TaskGroup

from alpd.domain.web_settings import WebSettings
from alpd.errors import WebUnavailable
from alpd.events import EventBus
from alpd.rpc.listener import FD_RESERVE
from alpd.web.address import home_address
from alpd.web.app import build_app
from alpd.web.connections import ConnectionGuard, guarded_protocol, web_cap
from alpd.web.door import Door
from alpd.web.login import LoginCodes, new_secret
from alpd.web.stream import EventStreams
from protocol import messages as m

LOOPBACK: Final = "127.0.0.1"
#: seconds an idle keep-alive connection stays open after a response
KEEP_ALIVE: Final = 5
#: the listen backlog, and so how many connections one wake-up accepts at most
BACKLOG: Final = 64
#: a request's head (request line and headers) at most
MAX_HEAD_BYTES: Final = 16 * 1024
TOKEN_FILE: Final = "web-token"

log = structlog.get_logger("alpd.web")


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: the daemon's own stop cancels this task."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebServer:
    def __init__(
        self,
        home: Path,
        door: Door,
        events: EventBus,
        settings: Callable[[], WebSettings],
    ) -> None:
        #: where an older alpd kept the token: removed when the page starts (the token now
        #: lives in this process only, out of reach of the runs, which are the user's too)
        self.stale_token_file = home / TOKEN_FILE
        self.home = home
        self.door = door
        self.events = events
        self._settings = settings
        self._codes = LoginCodes()
        self.token = ""
        self.address = LOOPBACK
        self.port = 0
        self.task_group: TaskGroup | None = None
        self.streams = EventStreams(events)
        self._server: uvicorn.Server | None = None
        self.guard: ConnectionGuard | None = None
        self._stopped = anyio.Event()

    @property
    def running(self) -> bool:
        return self.port != 0

    @property
    def url(self) -> str:
        return f"http://{self.address}:{self.port}/"

    def start(self) -> None:
        """Listen and serve from now on (a no-op when already serving)."""
        if self.running:
            return
        if self.task_group is None:
            raise WebUnavailable("the daemon is not serving yet; try again in a moment")
        sock = _bind(home_address(self.home), self._settings().port)
        try:
            token = new_secret()
            with contextlib.suppress(FileNotFoundError):
                self.stale_token_file.unlink()
            app = build_app(
                self.door,
                self.streams,
                self.redeem,
                lambda: self.token,
                lambda: self.port,
                lambda: self.address,
            )
        except BaseException:
            sock.close()
            raise
        self.address, self.port = sock.getsockname()[:2]
        self.token = token
        guard = ConnectionGuard(web_cap(resource.getrlimit(resource.RLIMIT_NOFILE)[0], FD_RESERVE))
        self.guard = guard
        config = uvicorn.Config(
            app,
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            proxy_headers=False,
            server_header=False,
            # the guard keeps connections at its cap (closing the longest waiter for a
            # request); this only bounds the tasks of requests that did arrive
            limit_concurrency=2 * guard.cap + 1,
            http=guarded_protocol(guard),
            timeout_keep_alive=KEEP_ALIVE,
            # connections taken per wake-up of the listener, before the guard sees them
            backlog=BACKLOG,
            h11_max_incomplete_event_size=MAX_HEAD_BYTES,
            timeout_graceful_shutdown=1,
        )
        self._server = _EmbeddedServer(config)
        self.task_group.start_soon(self._serve, self._server, sock)
        log.info("web_started", url=self.url)

    def open(self) -> m.WebOpenResult:
        """Serve if not yet, and make a one-time login URL."""
        started = not self.running
        self.start()
        code = new_secret()
        self._codes.issue(code, time.monotonic())
        return m.WebOpenResult(
            url=self.url,
            login_url=f"{self.url}login?code={code}",
            port=self.port,
            started=started,
        )

    def redeem(self, code: str) -> bool:
        return self._codes.redeem(code, time.monotonic())

    async def stop(self, timeout: float) -> None:
        """Stop accepting, end the event streams, let the requests in flight finish (at most
        `timeout` seconds, then the daemon's own stop cancels what is left)."""
        if self._server is None:
            return
        self._server.should_exit = True
        self.streams.close_all()
        with anyio.move_on_after(timeout):
            await self._stopped.wait()

    async def _serve(self, server: uvicorn.Server, sock: socket.socket) -> None:
        try:
            await server.serve(sockets=[sock])
        finally:
            for listener in getattr(server, "servers", ()):
                listener.close()
            sock.close()
            self._stopped.set()


def _bind(address: str, port: int | None) -> socket.socket:
    """A listening TCP socket on `address` (the home's own loopback address), or on
    127.0.0.1 where the system has no other (never any non-loopback address)."""
    try:
        return _listen(address, port)
    except OSError as exc:
        if exc.errno != errno.EADDRNOTAVAIL or address == LOOPBACK:
            raise _unavailable(address, port, exc) from exc
        log.warning(
            "web_address_unavailable",
            address=address,
            fallback=LOOPBACK,
            message=f"{address} cannot be bound here; the page uses {LOOPBACK}, where every "
            "other local server also gets its login cookie (on macOS: sudo ifconfig lo0 "
            f"alias {address})",
        )
    try:
        return _listen(LOOPBACK, port)
    except OSError as exc:
        raise _unavailable(LOOPBACK, port, exc) from exc


def _listen(address: str, port: int | None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((address, port or 0))
        sock.listen(BACKLOG)
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def _unavailable(address: str, port: int | None, exc: OSError) -> WebUnavailable:
    if exc.errno == errno.EADDRINUSE:
        return WebUnavailable(
            f"port {port} on {address} is taken by another program; set another "
            "[web] port in config.toml (or none, for a free one) and `alp daemon reload`",
            port=port,
        )
    return WebUnavailable(f"cannot listen on {address}:{port}: {exc.strerror}")
