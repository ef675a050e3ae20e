"""The web page of a test's daemon: open it with `alp web`, send it requests, log in."""

from __future__ import annotations

import http.client
import json
from dataclasses import dataclass
from urllib.parse import urlsplit

from alpd.testing.daemon import DaemonProcess


@dataclass(frozen=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: str


@dataclass(frozen=True)
class WebPage:
    url: str
    login_url: str
    port: int

    @property
    def address(self) -> str:
        """The loopback address the page listens on (from its URL)."""
        return urlsplit(self.url).hostname or "127.0.0.1"

    @property
    def host(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def origin(self) -> str:
        return f"http://{self.host}"

    def request(
        self,
        method: str,
        path: str,
        *,
        host: str | None = None,
        cookie: str | None = None,
        origin: str | None = None,
        form: str | None = None,
        accept: str | None = None,
    ) -> Answer:
        connection = http.client.HTTPConnection(self.address, self.port, timeout=30)
        headers = {"Host": host or self.host}
        if cookie is not None:
            headers["Cookie"] = cookie
        if origin is not None:
            headers["Origin"] = origin
        if accept is not None:
            headers["Accept"] = accept
        if form is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        try:
            connection.request(method, path, body=form, headers=headers)
            response = connection.getresponse()
            body = response.read().decode("utf-8", "replace")
            found = {name.lower(): value for name, value in response.getheaders()}
            return Answer(response.status, found, body)
        finally:
            connection.close()

    def log_in(self) -> str:
        """The cookie the login URL sets (`alp_web=…`)."""
        split = urlsplit(self.login_url)
        answer = self.request("GET", f"{split.path}?{split.query}")
        assert answer.status == 303, answer
        return answer.headers["set-cookie"].split(";")[0]


def open_page(daemon: DaemonProcess) -> WebPage:
    done = daemon.cli("web", "--json")
    assert done.returncode == 0, done.stderr
    opened = json.loads(done.stdout)
    return WebPage(
        url=opened["url"],
        login_url=opened["loginUrl"],
        port=opened["port"],
    )
