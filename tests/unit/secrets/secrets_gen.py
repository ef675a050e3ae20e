"""The seeded generator of fake credentials shared by the secret-filter corpus modules."""

from __future__ import annotations

import base64
import random
import string

__all__ = ["ALNUM", "B64", "DIGITS", "HEX", "LOWER", "UPPER", "URLSAFE", "Gen", "pem"]

UPPER = string.ascii_uppercase
LOWER = string.ascii_lowercase
DIGITS = string.digits
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = string.ascii_letters + string.digits + "+/"
URLSAFE = string.ascii_letters + string.digits + "-_"


class Gen:
    """Random strings in a credential's alphabet, the same for the same seed."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def s(self, alphabet: str, n: int) -> str:
        return "".join(self.rng.choice(alphabet) for _ in range(n))

    def b64(self, n_bytes: int) -> str:
        return base64.b64encode(self.rng.randbytes(n_bytes)).decode()

    def word(self) -> str:
        return self.rng.choice(["alice", "deploy", "svc_ci", "admin", "bob", "app"])

    def password(self) -> str:
        return self.s(ALNUM, 10) + self.rng.choice("!#%*") + self.s(DIGITS, 3)


def pem(g: Gen, label: str, n_bytes: int) -> tuple[str, str]:
    """A PEM block of ``n_bytes`` random bytes, and its base64 body."""
    body = g.b64(n_bytes)
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----", body
