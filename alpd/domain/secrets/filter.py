"""Secret filter: ``redact(text)`` replaces credentials with ``[REDACTED:<kind>]``.

It runs on every text alpd stores (prompts, replies, tool inputs, output tails of transcripts
and of runs, pins, thread titles, settle summaries), so it is pure (no IO, no globals
changed), bounded (anchored regex attempts, no nested quantifiers over overlapping classes)
and fast on the common case of a text with no secret at all. ``redacted_tail`` cuts an output
to its tail *after* redacting it, so a cut never hides a key's BEGIN line from the filter.

How, in the order it runs:

1. The text is ASCII-lower-cased (positions unchanged) and one Aho-Corasick pass
   (``ahocorasick-rs``, the Rust ``aho-corasick`` crate, built as a DFA) finds every
   occurrence of every rule's literals and of the stems of secret names.
2. A case-sensitive literal (``AKIA``, ``ghp_``) is checked against the original text; then
   its rule is tried with an anchored ``match`` where a match holding it would start (a
   fixed distance before it, or its line's start for ``.pgpass``), and a rule's ``check``
   may still refuse what it found (a certificate in base64, ``-p $PW``).
3. A stem (``pass``, ``token``, ``key`` …) starts a secret-named assignment when the name
   is a whole word or camelCase part, the operator follows (``=``, ``:``, ``=>``, or a space
   after a ``--flag``), and the value is not a placeholder, a variable reference, a path, a
   call or subscript (``getpass.getpass(…)``, ``os.environ["…"]``) or an attribute of a
   well-known object (``self.password``).
4. The one rule without a literal (Discord bot tokens) is located by a literal-led regex.
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

import bisect
import re
from dataclasses import dataclass
from typing import Final

from ahocorasick_rs import AhoCorasick, Implementation

from alpd.domain.secrets.context_rules import CONTEXT_RULES
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

# A quoted value runs to its closing quote (a password may hold spaces or commas); a bare one
# stops at whitespace, quotes and JSON/code punctuation.
_VALUE = (
    r"""(?:"(?P<s>[^"\n]{4,512})"|'(?P<s2>[^'\n]{4,512})'"""
    r"""|(?P<s3>[^\s"'`,;<>(){}\[\]]{4,512}))"""
)

# Secret-named assignments (``API_KEY=…``, ``"password": "…"``, ``--token=…``) are found from
# the stem every such name contains, in the lower-cased text, then checked with a regex
# anchored right after the stem: one case-insensitive regex trying ~20 names at every
# position ran at ~7 MB/s.
_STEMS = ("pass", "pwd", "secret", "token", "key", "credential", "auth")
# What may complete the name after its stem, then the operator, then the value. A name
# going on past that (``token_limit``, ``tokenizer``, ``password_file``) names something else.
_AFTER_STEM = re.compile(r"""(?:word|wd|phrase|ials|ial)?["']?[ \t]*(?::=|=>|=|:)[ \t]*""" + _VALUE)
# A command-line option (``--password PW``, ``--api-key KEY``) takes its value after a space.
_FLAG_BEFORE_STEM = re.compile(r"(?:^|(?<=[\s\"'=]))--[a-z0-9-]{0,32}\Z")
_AFTER_FLAG_STEM = re.compile(r"(?:word|wd|phrase|ials|ial)?[ \t]+" + _VALUE)
# ``key`` alone is too common (``"key": "value"``): it counts only as part of these names.
_KEY_NAME = re.compile(
    r"(?:api|app|access|secret|private|auth|client|master|account|encryption|signing)[_-]?\Z"
)
# A bare value that is code, not a credential: a call or subscript (``getpass.getpass(…)``,
# ``os.environ["OPENAI_API_KEY"]``), or an attribute of a well-known object.
_CODE_OBJECTS = frozenset(
    {"self", "cls", "this", "os", "config", "conf", "settings", "args", "opts", "options",
     "env", "environ", "request", "ctx", "context", "process", "props", "params"}
)  # fmt: skip
_DOTTED_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# ``ANTHROPIC_AUTH_TOKEN=MODEL_API_KEY``: a constant's name, not its value.
_CONSTANT_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")

_RULES: tuple[Rule, ...] = (*CONTEXT_RULES, *VENDOR_RULES)


@dataclass(frozen=True, slots=True)
class _Trigger:
    """What an occurrence of a literal (found in the lower-cased text) stands for: a rule to
    try or an assignment stem, once the original text is checked to hold ``exact`` there."""

    exact: str | None
    rule: Rule | None
    stem: str = ""


def _trigger_table() -> tuple[AhoCorasick, tuple[tuple[_Trigger, ...], ...]]:
    table: dict[str, list[_Trigger]] = {}
    for rule in _RULES:
        for literal in rule.triggers:
            trigger = _Trigger(None if rule.folded else literal, rule)
            table.setdefault(literal.lower(), []).append(trigger)
    for stem in _STEMS:
        table.setdefault(stem, []).append(_Trigger(None, None, stem))
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

_SECRET_GROUPS = ("s", "s2", "s3")
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


def _find(text: str) -> list[tuple[int, int, str]]:
    """Every secret span any rule finds (they may overlap)."""
    folded = _ascii_lower(text)
    hits = _AUTOMATON.find_matches_as_indexes(folded, overlapping=True)
    scan = _Scan(text, folded) if hits else None
    for index, at, _ in hits:
        for trigger in _TRIGGERS[index]:
            if trigger.exact is not None and not text.startswith(trigger.exact, at):
                continue
            assert scan is not None
            if trigger.rule is None:
                span = _assignment_at(text, folded, trigger.stem, at)
                if span is not None:
                    scan.spans.append((*span, "secret_assignment"))
            else:
                scan.try_rule(trigger.rule, at)
    for rule, locator, literal in _LOCATED:
        if literal not in text:
            continue
        for located in locator.finditer(text):
            scan = scan or _Scan(text, folded)
            scan.try_rule(rule, located.start())
    return scan.spans if scan is not None else []


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

    __slots__ = ("_closings", "_covered", "_tried", "folded", "spans", "text")

    def __init__(self, text: str, folded: str) -> None:
        self.text = text
        self.folded = folded
        self.spans: list[tuple[int, int, str]] = []
        self._covered: dict[Rule, int] = {}
        self._tried: set[tuple[Rule, int]] = set()
        self._closings: dict[Rule, tuple[list[int], list[int]]] = {}

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


def _secret_span(match: re.Match[str]) -> tuple[int, int]:
    groups = match.groupdict()
    for name in _SECRET_GROUPS:
        if groups.get(name) is not None:
            return match.span(name)
    return match.span()


def _assignment_at(text: str, folded: str, stem: str, at: int) -> tuple[int, int] | None:
    if stem == "key":
        if _KEY_NAME.search(folded, max(0, at - 12), at) is None:
            return None
    elif at > 0 and text[at - 1].islower() and not text[at].isupper():
        # Inside a word (``compass``, ``oauth``), unless camelCase starts here (``dbPassword``).
        return None
    # Matched on the folded text (``PASSWORD=``), the value then read from the original.
    match = _AFTER_STEM.match(folded, at + len(stem))
    if (
        match is None
        and folded.find("--", max(0, at - 34), at) >= 0
        and _FLAG_BEFORE_STEM.search(folded, max(0, at - 34), at)
    ):
        match = _AFTER_FLAG_STEM.match(folded, at + len(stem))
    if match is None:
        return None
    for name in _SECRET_GROUPS:
        start, end = match.span(name)
        if start >= 0:
            value = text[start:end]
            if name == "s3" and (
                _is_code(value, text[end : end + 1]) or _is_prose(text, folded, stem, at, end)
            ):
                return None
            return (start, end) if _looks_secret(value) else None
    return None


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
