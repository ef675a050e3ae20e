"""Canonical JSON (RFC 8785, JCS) and the sha256 digests built on it.

Every digest alp stores or compares — `policyHash`, snapshot and checkpoint digests — is
sha256 over these bytes, so two processes (or two versions of alp) that hold equal values
always agree on the digest, whatever order their dicts were built in (invariant 2 of
docs/contract.md).

Structs are lowered with `msgspec.to_builtins` first, so their wire names (camelCase) are
what gets hashed: the digest covers exactly what a client sees on the wire.
"""

from __future__ import annotations

import hashlib
from typing import Final

import msgspec
import rfc8785

DIGEST_PREFIX: Final = "sha256:"


def canonical_json(value: object) -> bytes:
    """The RFC 8785 bytes of `value` (a Struct, or plain JSON-able builtins)."""
    encoded: bytes = rfc8785.dumps(msgspec.to_builtins(value))
    return encoded


def sha256_digest(data: bytes) -> str:
    """`"sha256:<hex>"` of `data`; the prefix names the algorithm so it can change later."""
    return DIGEST_PREFIX + hashlib.sha256(data).hexdigest()


def digest_of(value: object) -> str:
    """The digest of the canonical JSON of `value`."""
    return sha256_digest(canonical_json(value))
