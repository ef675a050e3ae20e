"""One text's search for the secret filter: rules tried where their literals are, key blocks
closed by their END lines, base64 runs decoded around a vendor prefix, key tails whose BEGIN
line is gone. ``alpd.domain.secrets.filter`` drives it from its automaton's hits.
"""

from __future__ import annotations

import binascii
import bisect
import re
from collections.abc import Callable
from typing import Final

from alpd.domain.secrets.context_rules import PRIVATE_KEY_END
from alpd.domain.secrets.named import ASSIGNED_GROUPS
from alpd.domain.secrets.rules import Rule

#: a search of a decoded payload: spans ``(start, end, kind)`` of the payload
Find = Callable[[str], list[tuple[int, int, str]]]

# A base64-wrapped token: decoded from its prefix's group to the end of the run, at most
# ``_DECODE_RUN`` characters (3 KiB of payload), from up to ``_DECODE_BACK`` characters before
# (the token may start before its literal, after a ``user:``), at most ``_MAX_DECODES`` times
# per text.
_DECODE_RUN: Final = 4096
_DECODE_BACK: Final = 96
_MAX_DECODES: Final = 64
_BASE64_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{0,{_DECODE_RUN}}}")
_PADDING = re.compile(r"={0,2}")
_FROM_URLSAFE = str.maketrans("-_", "+/")
# A key's END line without its BEGIN line (``tail -n 6 key.pem``): the body is the lines of
# base64 right above it, each at most 128 characters, within 64 KiB (the reach of a block).
_KEY_END = re.compile(PRIVATE_KEY_END)
_KEY_LINE = re.compile(r"[A-Za-z0-9+/=]{0,129}")
_KEY_TAIL_REACH: Final = 65536


class Scan:
    """One text's search: the spans found, and what keeps it linear.

    * A rule is not tried again where a match would start inside the span it last found: a
      long run of a token's alphabet holding its literal many times (``sk-sk-sk-…``) costs
      one attempt, not one scan of the rest of the run per literal.
    * A line-start rule (``.pgpass``) is tried once per line, however many literals it holds.
    * A rule with a ``closing`` line (key blocks) finds its END lines in one pass, on its
      first BEGIN, and every BEGIN looks up the next one: each BEGIN is still tried (a
      truncated block must not hide the block after it), none scans 64 KiB for its END.
    """

    __slots__ = (
        "_closings",
        "_covered",
        "_decoded",
        "_decodes",
        "_find_in_payload",
        "_tried",
        "folded",
        "spans",
        "text",
    )

    def __init__(self, text: str, folded: str, find_in_payload: Find) -> None:
        self.text = text
        self._find_in_payload = find_in_payload
        self.folded = folded
        self.spans: list[tuple[int, int, str]] = []
        self._covered: dict[Rule, int] = {}
        self._tried: set[tuple[Rule, int]] = set()
        self._closings: dict[Rule, tuple[list[int], list[int]]] = {}
        # The run decoded last in each of the 4 phases of a base64 group, and how many runs.
        self._decoded: dict[int, tuple[int, int]] = {}
        self._decodes = 0

    def try_base64(self, group: int) -> None:
        """Decode the base64 run around a vendor prefix's encoding whose 3-byte group starts
        at ``group``, and find secrets in the payload; each is redacted as the base64
        characters that encode it (whole groups, the padding if it reaches the end).

        From ``_DECODE_BACK`` characters before the group to at most ``_DECODE_RUN`` after it,
        at most ``_MAX_DECODES`` times per text, and never again inside a run already decoded
        in the same phase: linear, however many prefixes a blob holds."""
        phase = group % 4
        done = self._decoded.get(phase)
        if group < 0 or self._decodes >= _MAX_DECODES or (done and done[0] <= group < done[1]):
            return
        text = self.text
        end = _BASE64_RUN.match(text, group).end()  # type: ignore[union-attr]
        lead = text[max(0, group - _DECODE_BACK) : group][::-1]
        start = group - _BASE64_RUN.match(lead).end() // 4 * 4  # type: ignore[union-attr]
        self._decodes += 1
        self._decoded[phase] = (start, end)
        chunk = text[start:end].translate(_FROM_URLSAFE)
        chunk = chunk[:-1] if len(chunk) % 4 == 1 else chunk + "=" * (-len(chunk) % 4)
        try:
            payload = binascii.a2b_base64(chunk).decode("latin-1")
        except binascii.Error:
            return
        padded = _PADDING.match(text, end).end()  # type: ignore[union-attr]
        for found_start, found_end, kind in self._find_in_payload(payload):
            last = min(end, start + -(-found_end // 3) * 4)
            self.spans.append((start + found_start // 3 * 4, padded if last == end else last, kind))

    def try_key_tail(self, at: int) -> None:
        """A private key's END line at ``at`` whose BEGIN line is gone (``tail -n 6 key.pem``,
        an output tail cut inside the block): the lines of base64 right above it, up to the
        first line that is not one, are its body. Lines end in a line break or, in a JSON
        string, an escaped one (``\\n``); a body of fewer than 16 characters a line is not
        one (prose above a quoted END line)."""
        text = self.text
        closing = _KEY_END.match(text, at)
        if closing is None:
            return
        lo = max(0, at - _KEY_TAIL_REACH)
        top, longest = at, 0
        edge = _line_break_before(text, at, lo)
        while edge is not None:
            if edge > lo and text[edge - 1] == "\\":
                edge -= 1  # a line continued (``\\`` then the line break)
            length = _KEY_LINE.match(text[max(lo, edge - 129) : edge][::-1]).end()  # type: ignore[union-attr]
            line = edge - length
            if length and line > lo and text[line - 1] == "\\" and text[line] == "n":
                line, length = line + 1, length - 1  # the ``n`` of an escaped line break
            if not 0 < length <= 128:
                break
            edge = _line_break_before(text, line, lo)
            if edge is None and line > lo:
                break  # a line that only ends in base64 (``$ tail -n 6 key.pem``)
            top, longest = line, max(longest, length)
        if longest >= 16:
            self.spans.append((top, closing.end(), "private_key"))

    def try_rule(self, rule: Rule, at: int) -> None:
        """Try ``rule`` anchored at each place a match holding the trigger at ``at`` would
        start. An anchored ``match`` at a position finds what a scan of the whole text finds
        starting there (it sees the characters before it, for ``\\b`` and lookbehinds)."""
        if rule.at_line_start:
            position = self.text.rfind("\n", 0, at) + 1
            if (rule, position) not in self._tried:
                self._tried.add((rule, position))
                self._match_at(rule, position)
            return
        covered = -1 if rule.closing is not None else self._covered.get(rule, -1)
        for distance in rule.starts:
            if distance > at:
                break
            if at - distance >= covered:
                self._match_at(rule, at - distance)

    def _match_at(self, rule: Rule, position: int) -> None:
        match = rule.pattern.match(self.folded if rule.folded else self.text, position)
        if match is None:
            return
        start, end = _secret_span(match)
        if rule.closing is not None:
            end = self._closed(rule, match.end()) or min(len(self.text), end + rule.fallback)
        if rule.check is None or rule.check(self.text[start:end]):
            self.spans.append((start, end, rule.kind))
            self._covered[rule] = end

    def _closed(self, rule: Rule, opened: int) -> int | None:
        """The end of the first closing line within ``rule.reach`` after ``opened``."""
        assert rule.closing is not None
        if rule not in self._closings:
            found = [(m.start(), m.end()) for m in rule.closing.finditer(self.text)]
            self._closings[rule] = ([a for a, _ in found], [b for _, b in found])
        starts, ends = self._closings[rule]
        index = bisect.bisect_left(starts, opened)
        if index < len(starts) and starts[index] - opened <= rule.reach:
            return ends[index]
        return None


def _line_break_before(text: str, position: int, lo: int) -> int | None:
    """Where the line break ends a line before ``position`` (a line's start, maybe after its
    indentation): a ``\\n`` or ``\\r\\n``, or an escaped ``\\\\n`` (once or more) in
    a JSON string; None if something else is before it."""
    while position > lo and text[position - 1] in " \t":
        position -= 1
    if position > lo and text[position - 1] == "\n":
        position -= 1
        return position - 1 if position > lo and text[position - 1] == "\r" else position
    if position - 2 >= lo and text.startswith("\\n", position - 2):
        position -= 2
        while position > lo and text[position - 1] == "\\":
            position -= 1
        return position
    return None


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    groups = match.groupdict()
    for name in ASSIGNED_GROUPS:
        if groups.get(name) is not None:
            return match.span(name)
    return match.span()


__all__ = ["Find", "Scan"]
