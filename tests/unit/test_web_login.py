"""Login codes (one use, expiring, bounded) and the token's comparison."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from alpd.web.login import LoginCodes, new_secret, token_matches


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
