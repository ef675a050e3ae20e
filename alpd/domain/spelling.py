"""The did-you-mean of a mistyped name (an agent, a runtime): the closest of the known names,
by difflib's ratio (at least 0.6, its own default), or nothing. Pure."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """` (did you mean 'x'?)` for the known name closest to `word`, else an empty string."""
    close = difflib.get_close_matches(word, sorted(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


__all__ = ["did_you_mean"]
