"""The `[web]` table of config.toml: whether alpd serves its web page, and on which port.

    [web]
    enabled = true     # serve from start (as `alpd --web`); default false
    port = 8765        # on 127.0.0.1; default: a free port the kernel picks

The page never listens on anything but 127.0.0.1, so there is no `host` key: a key that
could widen it would be a way to widen it by mistake. Pure: the caller passes the parsed
table and a `fail(path, message)` that raises ConfigError with the line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, NoReturn

import msgspec

WEB_KEYS: Final = ("enabled", "port")
#: below 1024 needs privileges alpd never has
MIN_PORT: Final = 1024
MAX_PORT: Final = 65535

Fail = Callable[[tuple[str, ...], str], NoReturn]


class WebSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = False
    #: None: a free port, chosen when the page starts
    port: int | None = None


def parse_web_settings(fail: Fail, table: object) -> WebSettings:
    """WebSettings from the `[web]` table (None when config.toml has none)."""
    if table is None:
        return WebSettings()
    if not isinstance(table, dict):
        fail(("web",), "web must be a table")
    for key in table:
        if key not in WEB_KEYS:
            fail(("web", key), f"unknown key {key!r} in [web] (known: {', '.join(WEB_KEYS)})")
    enabled = table.get("enabled", False)
    if not isinstance(enabled, bool):
        fail(("web", "enabled"), "web.enabled must be true or false")
    port = table.get("port")
    if port is not None and (
        isinstance(port, bool) or not isinstance(port, int) or not MIN_PORT <= port <= MAX_PORT
    ):
        fail(("web", "port"), f"web.port must be a whole number from {MIN_PORT} to {MAX_PORT}")
    return WebSettings(enabled=enabled, port=port)
