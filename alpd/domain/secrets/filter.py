"""Secret filter: ``redact(text)`` replaces credentials with ``[REDACTED:<kind>]``.

It runs on every text alpd stores (prompts, replies, tool inputs, output tails of transcripts
and of runs, pins, thread titles, settle summaries), so it is pure (no IO, no globals
changed), bounded (anchored regex attempts, no nested quantifiers over overlapping classes)
and fast on the common case of a text with no secret at all. ``redacted_tail`` cuts an output
to its tail *after* redacting it, so a cut never hides a key's BEGIN line from the filter.

How, in the order it runs:

1. The text is ASCII-lower-cased (positions unchanged) and one Aho-Corasick pass
   (``ahocorasick-rs``, the Rust ``aho-corasick`` crate, built as a DFA) finds every
   occurrence of every rule's literals, of the stems of secret names, of every vendor
   prefix as it reads in base64, of key END lines and of ``\\`` line continuations.
2. A case-sensitive literal (``AKIA``, ``ghp_``) is checked against the original text; then
   its rule is tried with an anchored ``match`` where a match holding it would start (a
   fixed distance before it, or its line's start for ``.pgpass``), and a rule's ``check``
   may still refuse what it found (a certificate in base64, ``-p $PW``).
3. A stem (``pass``, ``token``, ``key`` …) starts a secret-named assignment when the name
   is a whole word or camelCase part, the operator follows (``=``, ``:``, ``=>``, quotes
   escaped in JSON inside JSON, or a space after a ``--flag``, ``ENV``/``ARG`` or ``aws
   configure set``), and the value is not a placeholder, a variable reference, a path, a
   call or subscript (``getpass.getpass(…)``, ``os.environ["…"]``), an attribute of a
   well-known object (``self.password``) or the message of ``${NAME:?message}``. In a
   sentence ("the staging api key is X") only a value that looks random counts.
4. The one rule without a literal (Discord bot tokens) is located by a literal-led regex.
   A vendor prefix in base64 has its run decoded (bounded) and the payload searched; an END
   line without BEGIN takes the base64 lines above it; lines joined by ``\\`` continuations
   are searched again joined, and what is found across a join is mapped back.
5. What a span holds of a ``[REDACTED:<kind>]`` marker is taken out of it (the marker is
   never a secret), so ``redact`` is idempotent: a second pass over a redacted or cut text
   keeps every marker and its kind.
6. Overlapping spans are merged (the first kind named), and each is replaced.

A text with no literal costs one lower-casing and one automaton pass; a common literal
(``SK``, ``sk-``, ``key``) one anchored attempt per occurrence, never a regex scan of the
whole text. Secrets found by their name are ``alpd.domain.secrets.named``, the search of
one text ``alpd.domain.secrets.scan``. The rules live in ``alpd.domain.secrets.rules``
(vendor prefixes) and ``alpd.domain.secrets.context_rules`` (key blocks, URLs, headers,
command lines, ``.netrc`` and ``.pgpass``). Recall per kind, false positives per negative
group, throughput and the decisions behind them (our own rules rather than detect-secrets;
a DFA automaton) are in ``docs/secrets.md``, measured by ``bench/secrets_corpus_report.py``.

Known limits: a secret with no recognisable prefix and no secret-sounding name or syntax
near it (a bare 40-character string) is not found: that is the price of no false positives
on ids and hashes, which transcripts are full of. Case is folded for ASCII letters only
(secret names and header names are ASCII).
"""

from __future__ import annotations

import base64
import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ahocorasick_rs import AhoCorasick, Implementation

from alpd.domain.secrets.context_rules import CONTEXT_RULES
from alpd.domain.secrets.named import MARKER, STEMS, assignment_at
from alpd.domain.secrets.rules import VENDOR_RULES, Rule
from alpd.domain.secrets.scan import Scan

__all__ = ["REACH", "Redacted", "redact", "redact_argv", "redacted_tail"]

# How far before a position the text can change what is found there: a key block's END line
# may come 64 KiB after its BEGIN line (``alpd.domain.secrets.context_rules``), other rules look
# back a few hundred characters. Redacting the last ``n + REACH`` characters of an output finds
# every secret in its last ``n`` exactly as redacting the whole output would.
REACH: Final = 65536 + 1024

_RULES: tuple[Rule, ...] = (*CONTEXT_RULES, *VENDOR_RULES)

_TO_URLSAFE = str.maketrans("+/", "-_")
# A line continuation: ``export TOKEN=abc\`` then ``def`` on the next line is ``abcdef``.
_CONTINUATION = re.compile(r"\\\r?\n")
_CONTINUED_LINE_REACH: Final = 4096


@dataclass(frozen=True, slots=True)
class _Trigger:
    """What an occurrence of a literal (found in the lower-cased text) stands for: a rule to
    try or an assignment stem, once the original text is checked to hold ``exact`` there."""

    exact: str | None
    rule: Rule | None
    stem: str = ""
    # The base64 of a vendor prefix: how many characters before it its 3-byte group starts.
    decode_back: int = -1
    # A key block's END line, which may have lost its BEGIN line (a tail).
    key_tail: bool = False
    # A line continuation (``\\`` then a line break): the text has lines to join.
    joins: bool = False


def _base64_prefixes() -> set[tuple[str, int]]:
    """Every vendor prefix as it reads in base64, and how far before that its group starts.

    A prefix's bytes may start at any of the three offsets of a 3-byte group; at each, the
    characters that its bytes alone decide (``ghp_`` is ``Z2hwX`` at offset 0, ``docF`` at 1,
    ``naHBf`` at 2) are a literal of their own, kept if 4 characters or more long, in the
    standard and the URL-safe alphabet: a base64-wrapped token (``echo Z2hwX… | base64 -d``,
    ``user:ghp_…`` in a basic-auth blob) is found by the automaton pass, not by a scan."""
    found: set[tuple[str, int]] = set()
    for rule in VENDOR_RULES:
        for literal in rule.triggers if not rule.folded else ():
            data = literal.encode()
            for offset in range(3):
                encoded = base64.b64encode(bytes(offset) + data + bytes(2)).decode()
                first, last = -(-8 * offset // 6), 8 * (offset + len(data)) // 6
                if last - first >= 4:
                    found.add((encoded[first:last], first))
                    found.add((encoded[first:last].translate(_TO_URLSAFE), first))
    return found


def _trigger_table() -> tuple[AhoCorasick, tuple[tuple[_Trigger, ...], ...]]:
    table: dict[str, list[_Trigger]] = {}
    for rule in _RULES:
        for literal in rule.triggers:
            trigger = _Trigger(None if rule.folded else literal, rule)
            table.setdefault(literal.lower(), []).append(trigger)
    for stem in STEMS:
        table.setdefault(stem, []).append(_Trigger(None, None, stem))
    for encoded, back in _base64_prefixes():
        table.setdefault(encoded.lower(), []).append(_Trigger(encoded, None, decode_back=back))
    for end in ("-----END", "---- END"):
        table.setdefault(end.lower(), []).append(_Trigger(end, None, key_tail=True))
    # Found by the automaton pass: a ``str.find`` of it ran at 0.4 GB/s on JSON, which is full
    # of backslashes, a fifth of the time of the whole search.
    for continuation in ("\\\n", "\\\r\n"):
        table.setdefault(continuation, []).append(_Trigger(None, None, joins=True))
    literals = list(table)
    # A DFA: ~3x the default NFA's speed over 200 literals (measured: 48 vs 17 MB/s).
    automaton = AhoCorasick(literals, implementation=Implementation.DFA)
    return automaton, tuple(tuple(table[literal]) for literal in literals)


# One automaton for every literal of every rule: all their occurrences in one pass over the
# lower-cased text (case-sensitive literals are checked on the original afterwards).
_AUTOMATON, _TRIGGERS = _trigger_table()
# Rules found by a locator regex instead of a literal, with the literal their locator starts
# with (its leading letters and digits, maybe empty): a text without it is not searched.
_LOCATED = tuple(
    (rule, rule.locator, re.match(r"[A-Za-z0-9]*", rule.locator.pattern).group())  # type: ignore[union-attr]
    for rule in _RULES
    if rule.locator is not None
)

# A marker ``redact`` wrote (or one pasted from a redacted text): never a secret itself.
_MARKER_SPAN = re.compile(r"\[REDACTED:[a-z0-9_]{1,64}\]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# When two rules find the same span, the kind named is the first one's in this order.
_KIND_ORDER = {
    kind: rank for rank, kind in enumerate(("secret_assignment", *(r.kind for r in _RULES)))
}


@dataclass(frozen=True, slots=True)
class Redacted:
    """The text with every secret replaced, and the kinds found, in order of appearance."""

    text: str
    findings: tuple[str, ...]


def redact(text: str) -> Redacted:
    """``text`` with each secret replaced by ``[REDACTED:<kind>]``, and the kinds found."""
    spans = _outside_markers(text, _find(text))
    if not spans:
        return Redacted(text, ())
    pieces: list[str] = []
    findings: list[str] = []
    position = 0
    for start, end, kind in _merged(spans):
        pieces.append(text[position:start])
        pieces.append(f"{MARKER}{kind}]")
        findings.append(kind)
        position = end
    pieces.append(text[position:])
    return Redacted("".join(pieces), tuple(findings))


def redact_argv(argv: Sequence[str]) -> tuple[str, ...]:
    """Each argument with what is secret in it replaced, found in the command line they make
    together: `--token X`, `-H "Authorization: Bearer X"` or `mysql -p PW` are found as on a
    command line, though the name and the value are two arguments. A span that crosses from
    one argument into the next marks its part in each; the number of arguments never
    changes, nor an argument without a secret."""
    joined = " ".join(argv)
    spans = _merged(_outside_markers(joined, _find(joined)))
    if not spans:
        return tuple(argv)
    out: list[str] = []
    start = 0
    for arg in argv:
        end = start + len(arg)
        pieces: list[str] = []
        position = start
        for first, last, kind in spans:
            first, last = max(first, start), min(last, end)
            if first < last:
                pieces += [joined[position:first], f"{MARKER}{kind}]"]
                position = last
        pieces.append(joined[position:end])
        out.append("".join(pieces))
        start = end + 1
    return tuple(out)


def redacted_tail(text: str, limit: int) -> str:
    """The last ``limit`` bytes (UTF-8, from a character boundary) of ``text`` redacted whole.

    The text is redacted *before* the tail is cut, so a key block whose BEGIN line falls
    before the cut (``cat ~/.ssh/id_rsa`` of a 4096-bit key is 3.2 KiB) is still found and
    none of its body is kept. Only the last ``limit + REACH`` characters are redacted: nothing
    further back can change what is found in the tail."""
    data = redact(text[-(limit + REACH) :]).text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return data.decode("utf-8", "surrogatepass")
    start = len(data) - limit
    # Skip continuation bytes (0b10xxxxxx) so the tail never begins mid-character.
    while start < len(data) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:].decode("utf-8", "surrogatepass")


def _find(text: str, decode: bool = True, join: bool = True) -> list[tuple[int, int, str]]:
    """Every secret span any rule finds (they may overlap). A payload decoded from base64 is
    not decoded or joined again (``decode``, ``join`` false), lines joined not joined again."""
    folded = _ascii_lower(text)
    hits = _AUTOMATON.find_matches_as_indexes(folded, overlapping=True)
    scan = Scan(text, folded, _in_payload) if hits else None
    continued = False
    for index, at, _ in hits:
        for trigger in _TRIGGERS[index]:
            if trigger.exact is not None and not text.startswith(trigger.exact, at):
                continue
            assert scan is not None
            if trigger.rule is not None:
                scan.try_rule(trigger.rule, at)
            elif trigger.stem:
                span = assignment_at(text, folded, trigger.stem, at)
                if span is not None:
                    scan.spans.append((*span, "secret_assignment"))
            elif trigger.key_tail:
                scan.try_key_tail(at)
            elif trigger.joins:
                continued = True
            elif decode:
                scan.try_base64(at - trigger.decode_back)
    for rule, locator, literal in _LOCATED:
        if literal not in text:
            continue
        for located in locator.finditer(text):
            scan = scan or Scan(text, folded, _in_payload)
            scan.try_rule(rule, located.start())
    spans = scan.spans if scan is not None else []
    if join and continued:
        spans += _continued(text)
    return spans


def _in_payload(payload: str) -> list[tuple[int, int, str]]:
    """A payload decoded from base64 is searched once: not decoded or joined again."""
    return _find(payload, decode=False, join=False)


def _continued(text: str) -> list[tuple[int, int, str]]:
    """Secrets split by ``\\`` line continuations (``export TOKEN=abc\\`` then ``def``, a
    token cut in two, ``mysql -h db \\`` then ``-u app -pPW``): the lines around
    continuations are searched again joined, as the shell reads them, and what is found there
    is mapped back (a span across a join holds the backslash and the line break).

    Each join brings the two lines before its own (``Private-Lines: 1`` above a PuTTY key's
    line, ``machine`` above a ``.netrc`` password) and the line after it, up to
    ``_CONTINUED_LINE_REACH`` characters either side; windows that overlap or nearly touch
    are searched as one, so a script full of continuations costs one more search of it, not
    one per join."""
    joins = [match.span() for match in _CONTINUATION.finditer(text)]
    windows: list[list[int]] = []  # [start, end, first join, last join]
    for index, (join_start, join_end) in enumerate(joins):
        if windows and join_start <= windows[-1][1] + _CONTINUED_LINE_REACH:
            window = windows[-1]
            window[3] = index
            if join_end > window[1]:
                window[1] = _line_end(text, join_end)
            continue
        lo = max(0, join_start - _CONTINUED_LINE_REACH)
        start = join_start
        for _ in range(3):
            start = text.rfind("\n", lo, max(lo, start - 1)) + 1 or lo
        windows.append([start, _line_end(text, join_end), index, index])
    found: list[tuple[int, int, str]] = []
    for start, end, first, last in windows:
        pieces: list[str] = []
        points: list[int] = []  # where each join is in the joined text
        shifts: list[int] = []  # how many characters were taken out up to it, itself included
        position, removed = start, 0
        for join_start, join_end in joins[first : last + 1]:
            pieces.append(text[position:join_start])
            points.append(join_start - start - removed)
            removed += join_end - join_start
            shifts.append(removed)
            position = join_end
        pieces.append(text[position:end])
        for span_start, span_end, kind in _find("".join(pieces), join=False):
            before_start = bisect.bisect_right(points, span_start)
            before_end = bisect.bisect_left(points, span_end)
            found.append(
                (
                    start + span_start + (shifts[before_start - 1] if before_start else 0),
                    start + span_end + (shifts[before_end - 1] if before_end else 0),
                    kind,
                )
            )
    return found


def _line_end(text: str, position: int) -> int:
    """The end of the line ``position`` is in, at most ``_CONTINUED_LINE_REACH`` after it."""
    hi = min(len(text), position + _CONTINUED_LINE_REACH)
    end = text.find("\n", position, hi)
    return hi if end < 0 else end


def _ascii_lower(text: str) -> str:
    """``text`` with its ASCII letters lower-cased and nothing else changed, so that positions
    in it are those of ``text`` (``str.lower`` changes the length of a few non-ASCII letters).

    Through UTF-8 for a non-ASCII text: ``bytes.lower`` knows only ASCII, and the round trip
    ran at ~1 GB/s here where ``str.lower`` ran at ~0.5 and ``str.translate`` at 0.03. A lone
    surrogate (which UTF-8, and so the automaton, cannot hold) becomes a NUL, one for one."""
    if text.isascii():
        return text.lower()
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = _SURROGATE.sub("\x00", text).encode("utf-8")
    return data.lower().decode("utf-8")


def _outside_markers(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` without the ``[REDACTED:<kind>]`` markers they overlap: what a span holds
    besides a marker is still redacted, the marker never again. So a second pass over a
    redacted text (a cut tail, a re-encoded tool input) keeps every marker and its kind,
    where ``url_password`` would read ``[REDACTED`` as the user and ``github_token]`` as the
    password of ``https://[REDACTED:github_token]@github.com``."""
    if not spans or MARKER not in text:
        return spans
    markers = [match.span() for match in _MARKER_SPAN.finditer(text)]
    starts = [start for start, _ in markers]
    kept: list[tuple[int, int, str]] = []
    for start, end, kind in spans:
        index = max(0, bisect.bisect_right(starts, start) - 1)
        for marker_start, marker_end in markers[index:]:
            if marker_start >= end:
                break
            if marker_end <= start:
                continue
            if start < marker_start:
                kept.append((start, marker_start, kind))
            start = marker_end
        if start < end:
            kept.append((start, end, kind))
    return kept


def _merged(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans joined into one (keeping the kind of the one that starts first),
    so that no part of a secret found by two rules survives between their replacements."""
    spans.sort(key=lambda span: (span[0], -span[1], _KIND_ORDER[span[2]]))
    merged: list[tuple[int, int, str]] = []
    for start, end, kind in spans:
        if merged and start < merged[-1][1]:
            last_start, last_end, last_kind = merged[-1]
            merged[-1] = (last_start, max(last_end, end), last_kind)
        else:
            merged.append((start, end, kind))
    return merged
