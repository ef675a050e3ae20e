"""`parse_query`: user text to a safe FTS5 expression, and the index routing."""

from __future__ import annotations

import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.services.history.search import MAX_TERMS, parse_query
from alpd.store.history.entries import fold_text, has_cjk


@pytest.fixture(scope="module")
def fts() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE w USING fts5(body, tokenize='unicode61 remove_diacritics 2')"
    )
    conn.execute("CREATE VIRTUAL TABLE c USING fts5(body, tokenize='trigram')")
    conn.execute("INSERT INTO w VALUES ('zebra crossing near the duong pho')")
    conn.execute("INSERT INTO c VALUES ('我们使用中文搜索功能')")
    return conn


def test_terms_become_quoted_literals() -> None:
    query = parse_query('zebra AND "near(x" col:y')
    assert query.index == "words"
    assert query.expression == '"zebra" "AND" "near(x" "col:y"'


def test_quotes_inside_terms_are_doubled() -> None:
    assert parse_query('say"hi').expression == '"say""hi"'


def test_trailing_star_is_a_prefix_search() -> None:
    assert parse_query("zeb*").expression == '"zeb"*'
    assert parse_query('"zeb*"').expression == '"zeb*"'


def test_punctuation_only_is_no_query() -> None:
    assert parse_query("*** ( ) -").index == "none"
    assert parse_query("").index == "none"


def test_vietnamese_letters_without_decomposition_fold() -> None:
    assert fold_text("Đường đi") == "Dường di"
    assert parse_query("đường").expression == '"dường"'


def test_cjk_routes_to_trigram_or_like() -> None:
    assert parse_query("中文搜索").index == "trigram"
    assert parse_query("中文 search").index == "like"
    assert parse_query("中文搜索 search").index == "trigram"
    assert has_cjk("タワー") and has_cjk("한국어") and not has_cjk("Đường")


def test_terms_are_bounded() -> None:
    assert len(parse_query("x " * 1000).terms) == MAX_TERMS


def test_expressions_match_what_they_should(fts: sqlite3.Connection) -> None:
    for text in ("zebra", "ZEBRA cross*", "đường", '"near the"'):
        query = parse_query(text)
        assert (
            fts.execute("SELECT count(*) FROM w WHERE w MATCH ?", (query.expression,)).fetchone()[0]
            == 1
        ), text
    trigram = parse_query("中文搜索")
    assert (
        fts.execute("SELECT count(*) FROM c WHERE c MATCH ?", (trigram.expression,)).fetchone()[0]
        == 1
    )


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=200))
def test_no_user_text_is_an_fts_syntax_error(fts: sqlite3.Connection, text: str) -> None:
    query = parse_query(text)
    if query.index in ("words", "trigram"):
        table = "w" if query.index == "words" else "c"
        fts.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH ?", (query.expression,))
