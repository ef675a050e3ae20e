"""The page's credentials: the token (a cookie's value) and one-time login codes.

The token is made when the page starts and kept in alpd's memory only: a file the owner
can read, a run of theirs can read too. A browser (or a script) gets it only through a login
URL, which `web/open` hands over the socket — and never to a run (`NOT_FROM_A_RUN`).
A login code is good for one use and `CODE_TTL` seconds, at most `MAX_CODES` wait at once
(the oldest goes first): the URL `alp web` prints may end up in a terminal's scrollback
or a shell history, and a code that was used or has expired opens nothing.

`LoginCodes` is pure (time is a parameter, the code is made by the caller).
"""

from __future__ import annotations

import hmac
import secrets
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
