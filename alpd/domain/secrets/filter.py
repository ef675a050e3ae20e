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
whole text. The rules live in ``alpd.domain.secrets.rules`` (vendor prefixes) and
``alpd.domain.secrets.context_rules`` (key blocks, URLs, headers, command lines, ``.netrc`` and
``.pgpass``). Recall per kind, false positives per negative group, throughput and the
decisions behind them (our own rules rather than detect-secrets; a DFA automaton) are in
``docs/secrets.md``, measured by ``bench/secrets_corpus_report.py``.

Known limits: a secret with no recognisable prefix and no secret-sounding name or syntax
near it (a bare 40-character string) is not found: that is the price of no false positives
on ids and hashes, which transcripts are full of. Case is folded for ASCII letters only
(secret names and header names are ASCII).
"""

from __future__ import annotations

import base64
import binascii
import bisect
import math
import re
from dataclasses import dataclass
from typing import Final

from ahocorasick_rs import AhoCorasick, Implementation

from alpd.domain.secrets.context_rules import CONTEXT_RULES, PRIVATE_KEY_END
from alpd.domain.secrets.rules import VENDOR_RULES, Rule

__all__ = ["REACH", "Redacted", "redact", "redacted_tail"]

# How far before a position the text can change what is found there: a key block's END line
# may come 64 KiB after its BEGIN line (``alpd.domain.secrets.context_rules``), other rules look
# back a few hundred characters. Redacting the last ``n + REACH`` characters of an output finds
# every secret in its last ``n`` exactly as redacting the whole output would.
REACH: Final = 65536 + 1024

# Values of a secret-named assignment that are placeholders or type names, not secrets.
_NOT_SECRET_VALUES = frozenset(
    {
        "null",
        "none",
        "true",
        "false",
        "undefined",
        "redacted",
        "changeme",
        "example",
        "xxx",
        "string",
        "secret",
        "password",
    }
)


def _value(group: str) -> str:
    """A value, in groups ``group``, ``group2``, ``group3`` (bare) and ``group4``. A quoted
    value runs to its closing quote (a password may hold spaces or commas); a bare one stops
    at whitespace, quotes and JSON/code punctuation. In a JSON string inside a JSON string
    (``"{\\"password\\":\\"hunter2\\"}"``) the quotes are escaped once, twice or more."""
    return (
        rf"""(?:"(?P<{group}>[^"\n]{{4,512}})"|'(?P<{group}2>[^'\n]{{4,512}})'"""
        rf"""|\\{{1,7}}"(?P<{group}4>[^"\\\n]{{4,512}})\\{{1,7}}["]"""
        rf"""|(?P<{group}3>[^\s"'`,;<>(){{}}\[\]]{{4,512}}))"""
    )


# Secret-named assignments (``API_KEY=…``, ``"password": "…"``, ``--token=…``) are found from
# the stem every such name contains, in the lower-cased text, then checked with a regex
# anchored right after the stem: one case-insensitive regex trying ~20 names at every
# position ran at ~7 MB/s.
_STEMS = ("pass", "pwd", "secret", "token", "key", "credential", "auth")
# A secret named in a sentence ("the staging api key is X", "the token: `X`"): the name,
# maybe two words for ``key``, then ``is``/``was``/``:``/``=`` and a value that looks random
# (``_high_entropy``): the value, not the syntax, says it is a credential.
_PROSE_VALUE = (
    r"""(?:`(?P<p>[^`\n]{12,256})`|"(?P<p2>[^"\n]{12,256})["]"""
    r"""|(?P<p3>[^\s"'`,;<>(){}\[\]]{12,256}))"""
)
_PROSE_OPERATOR = r"(?:[ \t]+(?:is|was)[ \t]+|[ \t]*[:=][ \t]*)"
_NAME_END = r"(?P<n>word|wd|phrase|ials|ial)?"
_ASSIGNED, _IN_PROSE, _SPACED = ("s", "s2", "s3", "s4"), ("p", "p2", "p3"), ("t", "t2", "t3", "t4")
# What may complete the name after its stem, then the operator, then the value, in one regex
# tried once per stem (most are followed by none of them), the value's group saying which:
# ``s…`` an assignment (``API_KEY=``, ``"password": ``), ``p…`` a sentence ("the api key is"),
# ``t…`` a value after a space (``--password PW``, ``ENV API_TOKEN value``: only a flag or a
# setter before the name makes it one). A name going on past that (``token_limit``,
# ``tokenizer``, ``password_file``) names something else.
_AFTER_STEM = re.compile(
    _NAME_END
    + r"""(?:(?:\\{0,7}["'])?[ \t]*(?::=|=>|=|:)[ \t]*"""
    + _value("s")
    + "|"
    + _PROSE_OPERATOR
    + _PROSE_VALUE
    + r"|[ \t]+"
    + _value("t")
    + ")"
)
_AFTER_PROSE_STEM = re.compile(_NAME_END + _PROSE_OPERATOR + _PROSE_VALUE)
# A command-line option (``--password PW``, ``--api-key KEY``) takes its value after a space.
_FLAG_BEFORE_STEM = re.compile(r"(?:^|(?<=[\s\"'=]))--[a-z0-9-]{0,32}\Z")
# ``key`` alone is too common (``"key": "value"``): it counts only as part of these names;
# in a sentence ("the staging api key is X"), also after a space and a few more words.
_KEY_NAME = re.compile(
    r"(api|app|access|secret|private|auth|client|master|account|encryption|signing"
    r"|license|deploy|ssh)([ _-]?)\Z"
)
_PROSE_ONLY_KEY_NAMES = frozenset({"license", "deploy", "ssh"})
# A bare value that is code, not a credential: a call or subscript (``getpass.getpass(…)``,
# ``os.environ["OPENAI_API_KEY"]``), or an attribute of a well-known object.
_CODE_OBJECTS = frozenset(
    {"self", "cls", "this", "os", "config", "conf", "settings", "args", "opts", "options",
     "env", "environ", "request", "ctx", "context", "process", "props", "params"}
)  # fmt: skip
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# ``ANTHROPIC_AUTH_TOKEN=MODEL_API_KEY``: a constant's name, not its value.
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
# ``${API_KEY:?missing}``: a shell parameter expansion whose ``:?`` word is an error message.
_EXPANSION_BEFORE_NAME = re.compile(r"\$\{[A-Za-z0-9_]{0,64}\Z")
# A name, a space, its value: what precedes the name on its line says it is one of these.
# A Dockerfile's ``ENV API_TOKEN value`` and ``ARG`` (maybe after a ``cat -n`` line number),
# ``aws configure set aws_secret_access_key VALUE``, ``npm config set //host/:_authToken V``.
_SETTER_BEFORE_STEM = re.compile(
    r"[ \t]*(?:\d{1,6}(?:\u2192|\t|:|\|)[ \t]*)?(?:ENV|ARG)[ \t]+[A-Za-z0-9_]{0,64}\Z"
    r"|.{0,160}?\baws[ \t]+configure[ \t]+set[ \t]+[A-Za-z0-9_.-]{0,64}\Z"
    r"|.{0,160}?\b(?:npm|pnpm|yarn)[ \t]+config[ \t]+set[ \t]+\S{0,128}\Z"
)
_SENTENCE_END = ".,;:!?"

_RULES: tuple[Rule, ...] = (*CONTEXT_RULES, *VENDOR_RULES)

# A base64-wrapped token: decoded from its prefix's group to the end of the run, at most
# ``_DECODE_RUN`` characters (3 KiB of payload), from up to ``_DECODE_BACK`` characters before
# (the token may start before its literal, after a ``user:``), at most ``_MAX_DECODES`` times
# per text.
_DECODE_RUN: Final = 4096
_DECODE_BACK: Final = 96
_MAX_DECODES: Final = 64
_BASE64_RUN = re.compile(rf"[A-Za-z0-9+/_-]{{0,{_DECODE_RUN}}}")
_PADDING = re.compile(r"={0,2}")
_TO_URLSAFE = str.maketrans("+/", "-_")
_FROM_URLSAFE = str.maketrans("-_", "+/")
# A key's END line without its BEGIN line (``tail -n 6 key.pem``): the body is the lines of
# base64 right above it, each at most 128 characters, within 64 KiB (the reach of a block).
_KEY_END = re.compile(PRIVATE_KEY_END)
_KEY_LINE = re.compile(r"[A-Za-z0-9+/=]{0,129}")
_KEY_TAIL_REACH: Final = 65536
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
    for stem in _STEMS:
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

_SECRET_GROUPS = _ASSIGNED
_MARKER = "[REDACTED:"
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
        pieces.append(f"{_MARKER}{kind}]")
        findings.append(kind)
        position = end
    pieces.append(text[position:])
    return Redacted("".join(pieces), tuple(findings))


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
    scan = _Scan(text, folded) if hits else None
    continued = False
    for index, at, _ in hits:
        for trigger in _TRIGGERS[index]:
            if trigger.exact is not None and not text.startswith(trigger.exact, at):
                continue
            assert scan is not None
            if trigger.rule is not None:
                scan.try_rule(trigger.rule, at)
            elif trigger.stem:
                span = _assignment_at(text, folded, trigger.stem, at)
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
            scan = scan or _Scan(text, folded)
            scan.try_rule(rule, located.start())
    spans = scan.spans if scan is not None else []
    if join and continued:
        spans += _continued(text)
    return spans


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


class _Scan:
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
        "_tried",
        "folded",
        "spans",
        "text",
    )

    def __init__(self, text: str, folded: str) -> None:
        self.text = text
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
        for found_start, found_end, kind in _find(payload, decode=False, join=False):
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
    for name in _SECRET_GROUPS:
        if groups.get(name) is not None:
            return match.span(name)
    return match.span()


def _assignment_at(text: str, folded: str, stem: str, at: int) -> tuple[int, int] | None:
    named = True  # a secret's name on its own; else only in a sentence ("the api key is")
    if stem == "key":
        key_name = _KEY_NAME.search(folded, max(0, at - 12), at)
        if key_name is None:
            return None
        named = key_name[2] != " " and key_name[1] not in _PROSE_ONLY_KEY_NAMES
    elif at > 0 and text[at - 1].islower() and not text[at].isupper():
        # Inside a word (``compass``, ``oauth``), unless camelCase starts here (``dbPassword``).
        return None
    after = at + len(stem)
    # Matched on the folded text (``PASSWORD=``), the value then read from the original.
    match = _AFTER_STEM.match(folded, after)
    if match is None:
        return None
    found = match.lastgroup or ""
    if found in _ASSIGNED:
        if named:
            return _assigned(text, folded, stem, at, match, _ASSIGNED)
        match = _AFTER_PROSE_STEM.match(folded, after)  # ``deploy key: X``
        return None if match is None else _named_in_prose(text, stem, match)
    if found in _IN_PROSE:
        return _named_in_prose(text, stem, match)
    if named and (_flag_before(folded, at) or _setter_before(text, at)):
        return _assigned(text, folded, stem, at, match, _SPACED)
    return None


def _assigned(
    text: str, folded: str, stem: str, at: int, match: re.Match[str], groups: tuple[str, ...]
) -> tuple[int, int] | None:
    """The value of a secret-named assignment, unless it is code, prose or a placeholder."""
    for name in groups:
        start, end = match.span(name)
        if start >= 0:
            value = text[start:end]
            if name[1:] == "3" and (
                _is_code(value, text[end : end + 1])
                or (_is_prose(text, folded, stem, at, end) and not _high_entropy(value))
                or (value[0] == "?" and _EXPANSION_BEFORE_NAME.search(text, max(0, at - 64), at))
            ):
                return None
            return (start, end) if _looks_secret(value) else None
    return None


def _flag_before(folded: str, at: int) -> bool:
    """Whether the name ending at ``at`` is a command-line option (``--password PW``)."""
    return (
        folded.find("--", max(0, at - 34), at) >= 0
        and _FLAG_BEFORE_STEM.search(folded, max(0, at - 34), at) is not None
    )


def _setter_before(text: str, at: int) -> bool:
    """Whether the name ending at ``at`` is set by a space (``ENV API_TOKEN value``, ``aws
    configure set aws_secret_access_key V``), from what precedes it on its line."""
    lo = max(0, at - 200)
    start = text.rfind("\n", lo, at) + 1 or lo
    if (
        text.find("ENV", start, at) < 0
        and text.find("ARG", start, at) < 0
        and text.find("config", start, at) < 0
    ):
        return False
    return _SETTER_BEFORE_STEM.match(text, start, at) is not None


def _named_in_prose(text: str, stem: str, match: re.Match[str]) -> tuple[int, int] | None:
    """A secret named in a sentence ("the staging api key is X", "my GitHub token: X"): only
    a value that looks random (``_high_entropy``) is one, a word or a number is prose."""
    if stem == "auth" or (stem == "pass" and match.start("n") < 0):
        return None  # ``auth is``, ``pass is``: not a secret's name in a sentence
    for name in _IN_PROSE:
        start, end = match.span(name)
        if start >= 0:
            if name == "p3":
                end = start + len(text[start:end].rstrip(_SENTENCE_END))
            value = text[start:end]
            if (
                _high_entropy(value)
                and _looks_secret(value)
                and not _is_code(value, text[end : end + 1])
                and "://" not in value
            ):
                return start, end
            return None
    return None


def _high_entropy(value: str) -> bool:
    """Whether a value looks random: 12 characters or more, letters and digits, and at least
    3 bits of Shannon entropy a character (``Zx9Qk2Lm7Np4Rt8V``, not ``v1.2.3-beta1`` or
    ``2024-01-01T00:00``)."""
    if len(value) < 12 or not any(c.isdigit() for c in value):
        return False
    if not any(c.isalpha() for c in value):
        return False
    counts = [value.count(c) for c in set(value)]
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts) >= 3.0


def _is_prose(text: str, folded: str, stem: str, at: int, end: int) -> bool:
    """Whether a bare stem used as a word, then ``:`` and a word, is a sentence ("One pass:
    queued executions first") rather than ``pass: hunter2``: the sentence goes on after it."""
    if at > 0 and (text[at - 1].isalnum() or text[at - 1] in "_-."):
        return False
    if not folded.startswith(": ", at + len(stem)):
        return False
    return text[end : end + 1] == " " and text[end + 1 : end + 2].isalpha()


def _is_code(value: str, after: str) -> bool:
    """Whether a bare assigned value is an expression (``getpass.getpass(…)``,
    ``os.environ["KEY"]``, ``self.password``) rather than the secret itself."""
    if after in ("(", "[") or _CONSTANT_NAME.fullmatch(value) is not None:
        return True
    return _DOTTED_NAME.fullmatch(value) is not None and value.split(".", 1)[0] in _CODE_OBJECTS


def _outside_markers(text: str, spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """``spans`` without the ``[REDACTED:<kind>]`` markers they overlap: what a span holds
    besides a marker is still redacted, the marker never again. So a second pass over a
    redacted text (a cut tail, a re-encoded tool input) keeps every marker and its kind,
    where ``url_password`` would read ``[REDACTED`` as the user and ``github_token]`` as the
    password of ``https://[REDACTED:github_token]@github.com``."""
    if not spans or _MARKER not in text:
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


def _looks_secret(value: str) -> bool:
    """Whether a value assigned to a secret-sounding name is worth hiding.

    Short values, numbers (``max_tokens: 4096``), booleans, placeholders and variable
    references (``$TOKEN``, ``${TOKEN}``, ``<token>``) are configuration, not credentials.
    """
    if len(value) < 6 or value.isdigit() or value.lower() in _NOT_SECRET_VALUES:
        return False
    # Variable references, templates and paths (``PWD=/home/…``, ``PASSWORD_FILE=~/…``).
    if value.startswith(("$", "%", "{", "/", "~/", "./", _MARKER)):
        return False
    return not set(value) <= {"*", "x", "X", ".", "-"}
