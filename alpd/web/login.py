"""The page's credentials: the token (a cookie's value) and one-time login codes.

The token is made when the page starts and written to a 0600 file in the state home, so a
script of the owner's can send the cookie itself; the browser gets it only through a login
URL. A login code is good for one use and `CODE_TTL` seconds, at most `MAX_CODES` wait at
once (the oldest goes first): the URL `alp web` prints may end up in a terminal's scrollback
or a shell history, and a code that was used or has expired opens nothing.

`LoginCodes` is pure (time is a parameter, the code is made by the caller); the file is the
one piece of IO here.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
from pathlib import Path
from typing import Final

CODE_TTL: Final = 600.0
MAX_CODES: Final = 16
#: 256 bits, URL-safe
TOKEN_BYTES: Final = 32


def new_secret() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


class LoginCodes:
    """Codes waiting to be redeemed, each with its expiry."""

    def __init__(self, ttl: float = CODE_TTL, max_codes: int = MAX_CODES) -> None:
        self._ttl = ttl
        self._max = max_codes
        self._expiry: dict[str, float] = {}

    def __len__(self) -> int:
        return len(self._expiry)

    def issue(self, code: str, now: float) -> None:
        self._drop_expired(now)
        while len(self._expiry) >= self._max:
            del self._expiry[next(iter(self._expiry))]
        self._expiry[code] = now + self._ttl

    def redeem(self, code: str, now: float) -> bool:
        """True once for a code issued less than `ttl` ago; it is gone afterwards."""
        self._drop_expired(now)
        # compare_digest against each: no early exit that tells how much of a code matched
        found = [known for known in self._expiry if hmac.compare_digest(known, code)]
        for known in found:
            del self._expiry[known]
        return bool(found)

    def _drop_expired(self, now: float) -> None:
        for code in [code for code, expiry in self._expiry.items() if expiry <= now]:
            del self._expiry[code]


def token_matches(presented: str | None, token: str) -> bool:
    return presented is not None and hmac.compare_digest(presented.encode(), token.encode())


def write_token_file(path: Path, token: str) -> None:
    """Write the token to `path`, readable by the owner only, replacing any earlier file.

    Written beside and renamed into place, created 0600 from the first byte (never chmod
    after writing), and never through a symlink planted at the temporary name."""
    temporary = path.with_name(f".{path.name}.tmp")
    with contextlib.suppress(FileNotFoundError):
        temporary.unlink()
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, token.encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(temporary, path)
