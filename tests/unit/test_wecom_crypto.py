"""WeCom's callback envelope (alpd.channels.wecom_crypto) against the spec as the fake WeCom
writes it (tests/fake_wecom.py): what WeCom encrypts decrypts; a changed byte, a wrong key,
another corp's receive id and a bad signature are refused; the replay window holds."""

from __future__ import annotations

import base64
import contextlib

import pytest
from fake_wecom import AES_KEY, CALLBACK_TOKEN, CORP_ID, encrypt, sign
from hypothesis import given
from hypothesis import strategies as st

from alpd.channels.wecom_crypto import Refused, ReplayGuard, WecomCrypto, aes_key

CRYPTO = WecomCrypto(CALLBACK_TOKEN, AES_KEY, CORP_ID)


@given(st.text(max_size=3000))
def test_what_wecom_encrypts_decrypts_and_back(message: str) -> None:
    assert CRYPTO.decrypt(encrypt(message)) == message
    assert CRYPTO.decrypt(CRYPTO.encrypt(message, b"r" * 16)) == message


@given(st.text(min_size=1, max_size=200), st.integers(min_value=0, max_value=10_000))
def test_a_changed_byte_or_another_corp_is_refused(message: str, at: int) -> None:
    raw = bytearray(base64.b64decode(encrypt(message)))
    raw[at % len(raw)] ^= 0x01
    spoiled = base64.b64encode(bytes(raw)).decode()
    with contextlib.suppress(Refused):  # without the signature, CBC is malleable
        assert CRYPTO.decrypt(spoiled) != message
    with pytest.raises(Refused, match="receive id"):
        CRYPTO.decrypt(encrypt(message, receive_id="ww-another"))


def test_the_signature_is_sha1_of_the_sorted_parts() -> None:
    encrypted = encrypt("hi")
    CRYPTO.verify(sign("1700000000", "n1", encrypted), "1700000000", "n1", encrypted)
    with pytest.raises(Refused, match="signature"):
        CRYPTO.verify(sign("1700000000", "n2", encrypted), "1700000000", "n1", encrypted)


def test_a_wrong_key_is_refused_and_a_bad_key_is_named() -> None:
    other = WecomCrypto(CALLBACK_TOKEN, base64.b64encode(b"k" * 32).decode()[:43], CORP_ID)
    with pytest.raises(Refused):
        other.decrypt(encrypt("hello there, a message of some length"))
    with pytest.raises(ValueError, match="43 characters"):
        aes_key("short")


def test_the_replay_window() -> None:
    guard = ReplayGuard(window=300, most=3)
    guard.check("1000", "a", 1000.0)
    with pytest.raises(Refused, match="replay"):
        guard.check("1000", "a", 1001.0)
    with pytest.raises(Refused, match="300 s"):
        guard.check("699", "b", 1000.0)
    with pytest.raises(Refused, match="300 s"):
        guard.check("1301", "b", 1000.0)
    guard.check("1000", "b", 1000.0)
    guard.check("1000", "c", 1000.0)
    with pytest.raises(Refused, match="more than 3"):
        guard.check("1000", "d", 1000.0)
    guard.check("1700", "d", 1700.0)  # the old nonces are forgotten after twice the window
    guard.check("1700", "a", 1700.0)
