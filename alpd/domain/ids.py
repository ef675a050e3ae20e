"""Identifiers: a prefix and 26 characters of Crockford base32 (48 bits of milliseconds,
then 80 random bits), so ids sort by creation time, as ULIDs do.

Pure: the time and the entropy are parameters; the service layer supplies them.
"""

from __future__ import annotations

from typing import Final

_ALPHABET: Final = "0123456789abcdefghjkmnpqrstvwxyz"

THREAD_PREFIX: Final = "thread_"
EXECUTION_PREFIX: Final = "exec_"


def make_id(prefix: str, now_ms: int, entropy: bytes) -> str:
    if len(entropy) != 10:
        raise ValueError("entropy must be 10 bytes")
    value = ((now_ms & (2**48 - 1)) << 80) | int.from_bytes(entropy, "big")
    chars = []
    for _ in range(26):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return prefix + "".join(reversed(chars))


def has_prefix(value: str, prefix: str) -> bool:
    return value.startswith(prefix) and len(value) == len(prefix) + 26
