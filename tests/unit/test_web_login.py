"""Login codes (one use, expiring, bounded) and the token file (0600)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from alpd.web.login import LoginCodes, new_secret, token_matches, write_token_file


@given(st.floats(min_value=0, max_value=1e6), st.floats(min_value=0, max_value=599))
def test_a_code_opens_once_within_its_time(issued: float, later: float) -> None:
    codes = LoginCodes(ttl=600)
    codes.issue("abc", issued)
    assert codes.redeem("abc", issued + later)
    assert not codes.redeem("abc", issued + later)


@given(st.floats(min_value=600, max_value=1e6))
def test_an_expired_code_opens_nothing(after: float) -> None:
    codes = LoginCodes(ttl=600)
    codes.issue("abc", 0.0)
    assert not codes.redeem("abc", after)


def test_at_most_max_codes_wait_and_the_oldest_goes_first() -> None:
    codes = LoginCodes(ttl=600, max_codes=3)
    for index in range(5):
        codes.issue(f"c{index}", float(index))
    assert len(codes) == 3
    assert not codes.redeem("c0", 5.0)
    assert codes.redeem("c4", 5.0)


def test_an_unknown_code_opens_nothing() -> None:
    codes = LoginCodes()
    codes.issue(new_secret(), 0.0)
    assert not codes.redeem("", 1.0)
    assert not codes.redeem("guess", 1.0)


def test_secrets_are_long_and_distinct() -> None:
    made = {new_secret() for _ in range(50)}
    assert len(made) == 50
    assert all(len(secret) >= 43 for secret in made)


def test_token_matches_only_the_token() -> None:
    assert token_matches("abc", "abc")
    assert not token_matches("abd", "abc")
    assert not token_matches(None, "abc")


def test_the_token_file_is_0600_and_replaced_whole(tmp_path: Path) -> None:
    path = tmp_path / "web-token"
    path.write_text("old and longer than the new one\n")
    os.chmod(path, 0o644)
    write_token_file(path, "new")
    assert path.read_text() == "new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in tmp_path.iterdir()) == ["web-token"]


def test_the_token_file_never_follows_a_planted_symlink(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    target.write_text("keep\n")
    (tmp_path / ".web-token.tmp").symlink_to(target)
    write_token_file(tmp_path / "web-token", "secret")
    assert target.read_text() == "keep\n"
    assert (tmp_path / "web-token").read_text() == "secret\n"
