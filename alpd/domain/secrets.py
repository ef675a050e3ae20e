"""Secret filter: ``redact(text)`` replaces credentials with ``[REDACTED:<kind>]``.

It runs on every text the history stores (prompts, replies, tool inputs, output tails), so it
is pure (no IO, no globals changed), bounded (linear regex attempts, no nested quantifiers)
and fast on the common case of a text with no secret at all.

How: every rule names the literals each of its matches contains (``ghp_``, ``AKIA``,
``-----BEGIN`` …) and how far before such a literal a match starts. One Aho-Corasick pass
over the ASCII-lower-cased text (``ahocorasick-rs``: the Rust ``aho-corasick`` crate) finds
every occurrence of every literal of every rule, and of the stems of secret names; each rule
is then tried with an anchored ``match`` at those few positions only. A text with no literal
costs one lower-casing and one automaton pass; a common literal (``SK``, ``sk-``, ``key``)
costs one anchored attempt per occurrence, never a regex scan of the whole text. The one rule
without a literal (Discord bot tokens) is located by a literal-led regex (``.`` then the
token's shape). Before (one substring search per literal, 58 of them, then each triggered
rule's regex over the whole text), 55 % of the time went to the literal scans and most of
the rest to regexes of rules whose common literals were present.
``pyahocorasick`` 2.3.1 was measured too: one pass at ~75 MB/s on the raw fixture files
where ``ahocorasick-rs`` 1.0.3 ran at ~470 (and releases the GIL).

Decision: our own rule table, not Yelp ``detect-secrets``. Measured with
``bench/secrets_corpus_report.py`` on the fake-credential corpus in
``tests/unit/secrets_corpus.py`` (51 kinds, 3 samples each) and the real transcripts in
``tests/fixtures/runtimes`` (2-core shared dev machine; medians of 9 runs; floors measured
in the same run, interleaved):

* this module: recall 51/51 kinds; 0 findings on the 68 texts the fixtures would store and
  0 on the 15 raw fixture files (1.5 MB of system prompts, tool schemas, ids and hashes);
  ~208 MB/s on the raw files (20.5x one ``str.count`` pass, 11.2x one trivial
  ``re.search`` over the same text), 1.2 us per short stored text (35 MB/s, ~17x both
  floors). The previous design, run by the same report right after: 21.3 MB/s (194x
  ``str.count``) and 8.3 us per short text (111x): 9.8x and 6.9x slower.
* In the history sync (in-process profile on ``bench/bench_history.py``'s generated
  transcripts, 20 MB, median of 3): redaction went from 33 % of the sync's time (0.20 s) to
  11 % (0.04 s); the rest is parsing (9 %), the entry inserts (14 %), the two FTS5 indexes
  (51 %, of which ~45 % is ``alp_fold`` translating every text that holds a non-ASCII
  character) and commits (13 %).
* ``detect-secrets`` 1.5.0 (measured against the previous design), all its plugins driven
  in-process through ``plugin.analyze_line`` (no file IO needed, but ``default_settings()``
  global state): recall 25/51 kinds. It has no rules for Anthropic, Hugging Face, Google API
  keys, DigitalOcean, Shopify, Datadog or Heroku keys; its keyword plugin missed the ``.env``
  lines and its basic-auth plugin missed ``postgres://``, ``redis://`` and pip index URLs;
  its private-key plugin reports only the ``BEGIN`` line, so the key body would be stored.
  It reports strings, not spans (redaction is a ``str.replace`` per finding), its entropy
  plugins made 162 findings on the raw fixture files (ids and hashes), and it ran at
  0.9-1.1 MB/s on them (~3500-4200x ``str.count``), 0.1 MB/s (~360 us) per short text.
  A hybrid (detect-secrets first, our rules after) would add none of its recall on this
  corpus, all of its false positives and its cost, so it was not kept, and the dependency
  (with ``requests`` and ``pyyaml``) is not taken.

The rules borrow their shapes from detect-secrets' plugins and gitleaks' rule set (token
prefixes published by the vendors: ``ghp_``, ``xoxb-``, ``sk_live_``, ``AKIA`` …) and add
context rules: secret-named assignments (``API_KEY=…``, ``"password": "…"``, ``--password=``),
credentials in URLs (``scheme://user:pass@host``), authorization headers, signed-URL query
parameters, and PEM/PGP private-key blocks (redacted whole, up to their END line or, for a
truncated tail, the 8 KiB after BEGIN; every BEGIN is tried, so a truncated block's span
never hides the block after it).

Known limits: a secret with no recognisable prefix and no secret-sounding name near it (a
bare 40-character string) is not found; that is the price of no false positives on ids and
hashes, which transcripts are full of. Case is folded for ASCII letters only (secret names
and header names are ASCII). An ``x-<vendor>-access-token`` header is recognised for vendor
names of up to 32 letters.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from ahocorasick_rs import AhoCorasick

__all__ = ["Redacted", "redact"]

# Values of a secret-named assignment that are placeholders, not secrets.
_NOT_SECRET_VALUES = frozenset(
    {"null", "none", "true", "false", "undefined", "redacted", "changeme", "example", "xxx"}
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
# ``key`` alone is too common (``"key": "value"``): it counts only as part of these names.
_KEY_NAME = re.compile(
    r"(?:api|app|access|secret|private|auth|client|master|account|encryption|signing)[_-]?\Z"
)


@dataclass(frozen=True, slots=True)
class _Rule:
    """One detector: its regex, the literals every match of it contains, and where a match
    starts relative to them.

    Every match holds one of ``triggers`` at one of the distances ``starts`` from its first
    character, so the regex is only ever tried, anchored, at those few positions around a
    trigger's occurrences (found for all rules in one pass): a text holding no trigger costs
    nothing, and a common trigger costs one anchored attempt per occurrence, never a scan of
    the whole text.
    """

    kind: str
    pattern: re.Pattern[str]
    triggers: tuple[str, ...]
    starts: tuple[int, ...] = (0,)
    # Triggers and pattern are matched against the lower-cased text (so both are written in
    # lower case): far faster than ``re.IGNORECASE``. Positions are the same in both.
    folded: bool = False
    # For a rule without a literal in it: a literal-led regex whose matches stand for the
    # trigger occurrences (``starts`` counted from their start).
    locator: re.Pattern[str] | None = None


def _rule(
    kind: str,
    pattern: str,
    *triggers: str,
    starts: Iterable[int] = (0,),
    folded: bool = False,
    locator: str | None = None,
) -> _Rule:
    return _Rule(
        kind,
        re.compile(pattern),
        triggers,
        tuple(sorted(starts)),
        folded,
        re.compile(locator) if locator else None,
    )


# Names that carry a secret in a URL query (``?sig=…``, ``&access_token=…``).
_QUERY_NAMES = (
    "sig",
    "signature",
    "access_token",
    "token",
    "api_key",
    "apikey",
    "key",
    "secret",
    "password",
    "auth",
)

# The secret is the group s, s2 or s3 where a pattern has them, else the whole match.
_RULES: tuple[_Rule, ...] = (
    _rule(
        "private_key",
        # To the END line; without one in reach (a truncated tail), the next 8 KiB, which
        # holds the body of any RSA key up to 4096 bits.
        r"-----BEGIN[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----(?:"
        r"[\s\S]{0,65536}?-----END[ A-Z0-9_-]{0,40}PRIVATE KEY(?: BLOCK)?-----|[\s\S]{0,8192})",
        "-----BEGIN",
    ),
    _rule("age_secret_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}", "AGE-SECRET-KEY-1"),
    _rule(
        "aws_access_key_id",
        r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}\b",
        "AKIA",
        "ASIA",
        "ABIA",
        "ACCA",
        "A3T",
    ),
    _rule(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{60,255})\b",
        "ghp_",
        "gho_",
        "ghu_",
        "ghs_",
        "ghr_",
        "github_pat_",
    ),
    _rule(
        "gitlab_token",
        r"\b(?:glpat|gldt|glptt|glrt|glsoat)-[A-Za-z0-9_-]{20,}",
        "glpat-",
        "gldt-",
        "glptt-",
        "glrt-",
        "glsoat-",
    ),
    _rule("slack_token", r"\bxox[abposre]-[A-Za-z0-9-]{10,}", "xox"),
    _rule(
        "slack_webhook",
        r"hooks\.slack\.com/(?:services|workflows)/(?P<s>[A-Za-z0-9/_-]{20,})",
        "hooks.slack.com",
    ),
    _rule(
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/\d+/(?P<s>[\w-]{40,})",
        "/api/webhooks/",
        starts=(len("discord.com"), len("discordapp.com")),
    ),
    _rule(
        "discord_token",
        r"\b[MNO][A-Za-z\d_-]{23,25}\.[\w-]{6}\.[\w-]{27,38}\b",
        # The first dot of every token; only the dot is consumed (the rest is a lookahead),
        # so no candidate can swallow the next one's dot.
        locator=r"\.(?=[\w-]{6}\.[\w-]{27})",
        starts=(24, 25, 26),
    ),
    _rule(
        "stripe_key",
        r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}\b|\bwhsec_[A-Za-z0-9]{24,}",
        "_live_",
        "_test_",
        "whsec_",
        starts=(0, 2),
    ),
    _rule("twilio_api_key", r"\bSK[0-9a-fA-F]{32}\b", "SK"),
    _rule("sendgrid_api_key", r"\bSG\.[\w-]{22}\.[\w-]{43}\b", "SG."),
    _rule("mailgun_api_key", r"\bkey-[0-9a-f]{32}\b", "key-"),
    _rule("mailchimp_api_key", r"\b[0-9a-f]{32}-us\d{1,2}\b", "-us", starts=(32,)),
    _rule("anthropic_api_key", r"\bsk-ant-[a-z]{3,5}\d{2}-[A-Za-z0-9_-]{80,}", "sk-ant-"),
    _rule(
        "openai_api_key",
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}T3BlbkFJ[A-Za-z0-9_-]{16,}"
        r"|\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
        "sk-",
    ),
    _rule("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b", "hf_"),
    _rule("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b", "npm_"),
    _rule("pypi_token", r"\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{40,}", "pypi-AgEI"),
    _rule("digitalocean_token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", "_v1_", starts=(3,)),
    _rule(
        "shopify_token",
        r"\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b",
        "shpat_",
        "shpss_",
        "shpca_",
        "shppa_",
    ),
    _rule("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])", "AIza"),
    _rule("google_oauth_secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}(?![A-Za-z0-9_-])", "GOCSPX-"),
    _rule(
        "square_token",
        r"\b(?:EAAA|sq0atp-|sq0csp-)[A-Za-z0-9_-]{22,}",
        "EAAA",
        "sq0atp-",
        "sq0csp-",
    ),
    _rule(
        "telegram_bot_token",
        r"(?<!\d)\d{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])",
        ":AA",
        starts=(8, 9, 10),
    ),
    _rule("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*", "eyJ"),
    _rule(
        "azure_storage_key",
        r"(?:AccountKey|SharedAccessKey)=(?P<s>[A-Za-z0-9+/=]{20,})",
        "AccountKey=",
        "SharedAccessKey=",
    ),
    _rule("url_password", r"://[^\s:@/\"'<>]{0,256}:(?P<s>[^\s@/\"'<>]{1,256})@", "://"),
    _rule(
        "url_query_secret",
        r"[?&](?:sig|signature|access_token|token|api_?key|key|secret|password|auth)"
        r"=(?P<s>[^&\s#\"'<>]{8,})",
        *(f"{lead}{name}=" for name in _QUERY_NAMES for lead in "?&"),
        folded=True,
    ),
    _rule(
        "authorization_header",
        # Tried where ``authorization`` starts: a ``proxy-`` before it changes nothing in
        # the secret's span.
        r"\b(?:proxy-)?authorization\s*[:=]\s*[\"']?(?:bearer|basic|token|bot|digest)\s+"
        r"(?P<s>[a-z0-9._~+/=-]{8,})",
        "authorization",
        folded=True,
    ),
    _rule(
        "token_header",
        r"\b(?:private-token|x-api-key|x-auth-token|api-key)\s*:\s*(?P<s>[^\s\"']{8,})",
        "private-token",
        "api-key",
        "x-auth-token",
        folded=True,
    ),
    _rule(
        "token_header",
        # ``x-<vendor>-access-token``: the vendor name, up to 32 letters, precedes the trigger.
        r"\bx-[a-z]{1,32}-access-token\s*:\s*(?P<s>[^\s\"']{8,})",
        "-access-token",
        starts=range(len("x-a"), len("x-") + 33),
        folded=True,
    ),
)


@dataclass(frozen=True, slots=True)
class _Trigger:
    """What an occurrence of a literal (found in the lower-cased text) stands for: a rule to
    try or an assignment stem, once the original text is checked to hold ``exact`` there."""

    exact: str | None
    rule: _Rule | None
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
    return AhoCorasick(literals), tuple(tuple(table[literal]) for literal in literals)


# One automaton for every literal of every rule: all their occurrences in one pass over the
# lower-cased text (case-sensitive literals are checked on the original afterwards).
_AUTOMATON, _TRIGGERS = _trigger_table()
_LOCATED = tuple((rule, rule.locator) for rule in _RULES if rule.locator is not None)

_SECRET_GROUPS = ("s", "s2", "s3")
_MARKER = "[REDACTED:"
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
    spans = _find(text)
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


def _find(text: str) -> list[tuple[int, int, str]]:
    """Every secret span any rule finds (they may overlap)."""
    folded = _ascii_lower(text)
    spans: list[tuple[int, int, str]] = []
    for index, at, _ in _AUTOMATON.find_matches_as_indexes(folded, overlapping=True):
        for trigger in _TRIGGERS[index]:
            if trigger.exact is not None and not text.startswith(trigger.exact, at):
                continue
            if trigger.rule is None:
                span = _assignment_at(text, folded, trigger.stem, at)
                if span is not None:
                    spans.append((*span, "secret_assignment"))
            else:
                _try_rule(trigger.rule, text, folded, at, spans)
    for rule, locator in _LOCATED:
        for located in locator.finditer(text):
            _try_rule(rule, text, folded, located.start(), spans)
    return spans


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


def _try_rule(
    rule: _Rule, text: str, folded: str, at: int, spans: list[tuple[int, int, str]]
) -> None:
    """Try ``rule`` anchored at each place a match holding the trigger at ``at`` would start.

    An anchored ``match`` at a position finds what a scan of the whole text finds starting
    there (it sees the characters before it, for ``\\b`` and lookbehinds, and all after)."""
    haystack = folded if rule.folded else text
    for distance in rule.starts:
        if distance > at:
            break
        match = rule.pattern.match(haystack, at - distance)
        if match is not None:
            start, end = _secret_span(match)
            # An earlier redaction's marker is not a secret: redacting stays idempotent.
            if not text.startswith(_MARKER, start):
                spans.append((start, end, rule.kind))


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
    if match is None:
        return None
    for name in _SECRET_GROUPS:
        start, end = match.span(name)
        if start >= 0:
            return (start, end) if _looks_secret(text[start:end]) else None
    return None


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
