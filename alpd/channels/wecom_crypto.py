"""WeCom's callback security: the signature, the AES envelope and the replay window (no IO).

What WeCom sends to the callback URL (its "receive messages" spec):
- `msg_signature` = hex sha1 of the sorted, concatenated (token, timestamp, nonce, encrypt),
  where `encrypt` is the base64 ciphertext (the `echostr` of the URL check, the `<Encrypt>`
  of a POST's XML);
- the ciphertext is AES-256-CBC with key = base64decode(EncodingAESKey + "="), IV = key[:16],
  PKCS#7-padded to 32-byte blocks; its plaintext is random(16) + the message's length (4
  bytes, network order) + the message + the receive id (the corp id, checked here).

A callback is refused (`Refused`, its reason logged, never the content) when the signature
does not match, the timestamp is more than `WINDOW_SECONDS` from now, the nonce was seen in
the window, the ciphertext does not decrypt and unpad, or the receive id is not ours.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import struct
from collections import OrderedDict
from typing import Final

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

#: how far a callback's timestamp may be from now, either way
WINDOW_SECONDS: Final = 300
#: nonces remembered (each for the window); more than this in one window are refused
MAX_NONCES: Final = 10_000
BLOCK: Final = 32


class Refused(Exception):
    """A callback that is not from WeCom, or not for us, or seen before."""


def signature(token: str, timestamp: str, nonce: str, encrypt: str) -> str:
    return hashlib.sha1("".join(sorted((token, timestamp, nonce, encrypt))).encode()).hexdigest()


def aes_key(encoding_aes_key: str) -> bytes:
    """The 32-byte key from the app's 43-character EncodingAESKey."""
    try:
        key = base64.b64decode(encoding_aes_key.strip() + "=", validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the EncodingAESKey is not 43 characters of base64") from None
    if len(key) != 32:
        raise ValueError("the EncodingAESKey is not 43 characters of base64 (32 bytes)")
    return key


def pkcs7_pad(data: bytes) -> bytes:
    size = BLOCK - len(data) % BLOCK
    return data + bytes([size]) * size


def pkcs7_unpad(data: bytes) -> bytes:
    if not data or len(data) % 16:
        raise Refused("the ciphertext is not whole blocks")
    size = data[-1]
    if not 1 <= size <= BLOCK or data[-size:] != bytes([size]) * size:
        raise Refused("bad padding")
    return data[:-size]


class WecomCrypto:
    def __init__(self, token: str, encoding_aes_key: str, receive_id: str) -> None:
        self.token = token
        self.key = aes_key(encoding_aes_key)
        self.receive_id = receive_id

    def verify(self, msg_signature: str, timestamp: str, nonce: str, encrypt: str) -> None:
        expected = signature(self.token, timestamp, nonce, encrypt)
        if not hmac.compare_digest(expected, msg_signature.lower()):
            raise Refused("bad signature")

    def decrypt(self, encrypt: str) -> str:
        try:
            raw = base64.b64decode(encrypt, validate=True)
        except (binascii.Error, ValueError):
            raise Refused("the ciphertext is not base64") from None
        if not raw or len(raw) % 16:
            raise Refused("the ciphertext is not whole blocks")
        decryptor = Cipher(algorithms.AES(self.key), modes.CBC(self.key[:16])).decryptor()
        plain = pkcs7_unpad(decryptor.update(raw) + decryptor.finalize())
        if len(plain) < 20:
            raise Refused("the plaintext is too short")
        (length,) = struct.unpack(">I", plain[16:20])
        message, receive_id = plain[20 : 20 + length], plain[20 + length :]
        if len(message) != length:
            raise Refused("the message length is wrong")
        if not hmac.compare_digest(receive_id, self.receive_id.encode()):
            raise Refused("the receive id is not this corp's")
        try:
            return message.decode()
        except UnicodeDecodeError:
            raise Refused("the message is not UTF-8") from None

    def encrypt(self, message: str, random16: bytes) -> str:
        """The envelope WeCom would send (for a passive reply; the tests build their own)."""
        body = message.encode()
        plain = random16 + struct.pack(">I", len(body)) + body + self.receive_id.encode()
        encryptor = Cipher(algorithms.AES(self.key), modes.CBC(self.key[:16])).encryptor()
        return base64.b64encode(encryptor.update(pkcs7_pad(plain)) + encryptor.finalize()).decode()


class ReplayGuard:
    """Timestamps within the window, and each nonce once per window (bounded)."""

    def __init__(self, window: int = WINDOW_SECONDS, most: int = MAX_NONCES) -> None:
        self.window = window
        self.most = most
        #: nonce → when it may be forgotten (epoch seconds), oldest first
        self._seen: OrderedDict[str, float] = OrderedDict()

    def check(self, timestamp: str, nonce: str, now: float) -> None:
        try:
            at = int(timestamp)
        except ValueError:
            raise Refused("the timestamp is not a number") from None
        if abs(now - at) > self.window:
            raise Refused(f"the timestamp is more than {self.window} s from now")
        if not nonce or len(nonce) > 64:
            raise Refused("no nonce")
        while self._seen and next(iter(self._seen.values())) < now:
            self._seen.popitem(last=False)
        if nonce in self._seen:
            raise Refused("the nonce was seen before (a replay)")
        if len(self._seen) >= self.most:
            raise Refused(f"more than {self.most} callbacks in {self.window} s")
        self._seen[nonce] = now + 2 * self.window


__all__ = [
    "MAX_NONCES",
    "WINDOW_SECONDS",
    "Refused",
    "ReplayGuard",
    "WecomCrypto",
    "aes_key",
    "signature",
]
