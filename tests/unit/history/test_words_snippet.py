"""The PostgreSQL search's snippet (alpd/store/history/search_postgres.py, `words_snippet`):
made faster for the bench (words folded only up to the first match and within the window,
ASCII words only lower-cased), it gives what the plain reading — every word folded, every
match found, those in the window marked — gives, for any text and query (hypothesis)."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.store.entry_rows import fold_text
from alpd.store.history.search import LIKE_CONTEXT_CHARS, SNIPPET_TOKENS
from alpd.store.history.search_postgres import _WORD, _folded, _query_words, words_snippet


def plain_snippet(body: str, expression: str, start: str, end: str) -> str:
    """The snippet as first written: every word of `body` folded and tested."""
    wanted = _query_words(expression)
    spans = [match.span() for match in _WORD.finditer(body)]

    def matches(at: int) -> bool:
        word = _folded(body[spans[at][0] : spans[at][1]])
        return any(word.startswith(w) if prefix else word == w for w, prefix in wanted)

    hit = [i for i in range(len(spans)) if matches(i)]
    if not spans:
        return body[: LIKE_CONTEXT_CHARS * 2]
    first = max(0, (hit[0] if hit else 0) - SNIPPET_TOKENS // 4)
    last = min(len(spans), first + SNIPPET_TOKENS) - 1
    left, right = spans[first][0], spans[last][1]
    pieces, at = [], left
    for i in (i for i in hit if first <= i <= last):
        pieces += [body[at : spans[i][0]], start, body[spans[i][0] : spans[i][1]], end]
        at = spans[i][1]
    pieces.append(body[at:right])
    return ("…" if first else "") + "".join(pieces) + ("…" if last < len(spans) - 1 else "")


WORDS = ["duong", "Đường", "ĐƯỜNG", "main", "Main.py", "maintain", "ﬁle", "file", "x_y", "naïve"]
texts = st.lists(st.sampled_from(WORDS) | st.text(max_size=8), max_size=120).map(
    lambda parts: " ".join(parts)
)
literals = st.lists(
    st.tuples(st.sampled_from(WORDS) | st.text(min_size=1, max_size=5), st.booleans()),
    min_size=1,
    max_size=3,
).map(lambda xs: " ".join('"' + w.replace('"', '""') + '"' + ("*" if p else "") for w, p in xs))


@settings(max_examples=400)
@given(texts, literals)
def test_the_snippet_is_the_plain_readings(body: str, expression: str) -> None:
    assert words_snippet(body, expression, "[", "]") == plain_snippet(body, expression, "[", "]")


def test_a_folded_match_is_marked_as_stored() -> None:
    body = "on the road: Đường phố, then main.py"
    assert words_snippet(body, '"duong"', "<", ">") == "on the road: <Đường> phố, then main.py"


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_an_ascii_word_folds_to_its_lower_case(word: str) -> None:
    decomposed = unicodedata.normalize("NFKD", fold_text(word).lower())
    assert _folded(word) == "".join(c for c in decomposed if not unicodedata.combining(c))
