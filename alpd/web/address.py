"""The page's own loopback address: one of 127.0.0.0/8, chosen at random once per home, kept.

Browsers scope cookies by host, never by port: a cookie set by a page on 127.0.0.1 goes with
every request to any server on 127.0.0.1, whatever its port and whoever runs it — and a
replayed `alp_web` started a run. On an address of its own (say 127.84.201.17) the page's
cookie goes to the page alone. Linux routes all of 127.0.0.0/8 to the loopback interface, so
no set-up is needed; where the system has only 127.0.0.1 (macOS without an alias) binding
fails with EADDRNOTAVAIL and the page falls back to 127.0.0.1, saying so in the log.

The address is kept in `$ALP_HOME/web-address` so the page's URL (and a bookmark, and the
browser's cookie) survives daemon restarts; delete the file to draw a new one.
"""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path
from typing import Final

from alpd.files import write_private_file

ADDRESS_FILE: Final = "web-address"


def draw() -> str:
    """A random address in 127.0.0.0/8, away from 127.0.0.0/16 (127.0.0.1, 127.0.1.1 and
    the other well-known ones) and from network and broadcast-like ends."""
    return f"127.{secrets.randbelow(254) + 1}.{secrets.randbelow(256)}.{secrets.randbelow(253) + 2}"


def is_own(text: str) -> bool:
    try:
        address = ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return address in ipaddress.IPv4Network("127.0.0.0/8") and not text.startswith("127.0.")


def home_address(home: Path) -> str:
    """The address kept for this home, drawn (and kept) on first use."""
    path = home / ADDRESS_FILE
    try:
        kept = path.read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        kept = ""
    if is_own(kept):
        return kept
    address = draw()
    write_private_file(path, address + "\n")
    return address
