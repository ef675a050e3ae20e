"""Secrets found by their name: ``API_KEY=…``, ``"password": "…"``, ``--token PW``, ``ENV
API_TOKEN value``, ``aws configure set aws_secret_access_key V``, and "the staging api key is
X" in a sentence.

The filter's automaton finds each stem (``STEMS``) in the lower-cased text; ``assignment_at``
then decides, anchored right after the stem, whether a secret's name, an operator and a value
follow, and returns the value's span. Placeholders, variable references, paths, code
(``os.environ["KEY"]``) and, in prose, values that do not look random are not secrets.
"""

from __future__ import annotations

import math
import re

#: how a redaction marker starts (``[REDACTED:<kind>]``): a value that is one is no secret
MARKER = "[REDACTED:"

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
STEMS = ("pass", "pwd", "secret", "token", "key", "credential", "auth")
# A secret named in a sentence ("the staging api key is X", "the token: `X`"): the name,
# maybe two words for ``key``, then ``is``/``was``/``:``/``=`` and a value that looks random
# (``_high_entropy``): the value, not the syntax, says it is a credential.
_PROSE_VALUE = (
    r"""(?:`(?P<p>[^`\n]{12,256})`|"(?P<p2>[^"\n]{12,256})["]"""
    r"""|(?P<p3>[^\s"'`,;<>(){}\[\]]{12,256}))"""
)
_PROSE_OPERATOR = r"(?:[ \t]+(?:is|was)[ \t]+|[ \t]*[:=][ \t]*)"
_NAME_END = r"(?P<n>word|wd|phrase|ials|ial)?"
ASSIGNED_GROUPS, _IN_PROSE, _SPACED = (
    ("s", "s2", "s3", "s4"),
    ("p", "p2", "p3"),
    ("t", "t2", "t3", "t4"),
)
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


def assignment_at(text: str, folded: str, stem: str, at: int) -> tuple[int, int] | None:
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
    if found in ASSIGNED_GROUPS:
        if named:
            return _assigned(text, folded, stem, at, match, ASSIGNED_GROUPS)
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


def _looks_secret(value: str) -> bool:
    """Whether a value assigned to a secret-sounding name is worth hiding.

    Short values, numbers (``max_tokens: 4096``), booleans, placeholders and variable
    references (``$TOKEN``, ``${TOKEN}``, ``<token>``) are configuration, not credentials.
    """
    if len(value) < 6 or value.isdigit() or value.lower() in _NOT_SECRET_VALUES:
        return False
    # Variable references, templates and paths (``PWD=/home/…``, ``PASSWORD_FILE=~/…``).
    if value.startswith(("$", "%", "{", "/", "~/", "./", MARKER)):
        return False
    return not set(value) <= {"*", "x", "X", ".", "-"}


__all__ = ["ASSIGNED_GROUPS", "MARKER", "STEMS", "assignment_at"]
