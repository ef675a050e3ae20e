"""Reading the tables of config.toml: typed fields, unknown keys refused, and the line of
the offending key found for the message (`ConfigError(path, line, message)`).

Every `[…]` table alp reads (agents, runtimes, handoff, recap, web, and those to come) uses
these, so a typo is refused the same way everywhere and points at its line.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, NoReturn


class ConfigError(Exception):
    """config.toml is not valid; `line` is 1-based and points at the offending text, or is
    None when the whole file is at fault (a directory, unreadable)."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        self.path = path
        self.line = line
        self.message = message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


def table_of(fail: Failer, path: tuple[str, ...], value: object) -> dict[str, object]:
    if not isinstance(value, dict):
        fail(path, f"{'.'.join(path)} must be a table")
    return value


def reject_unknown(
    fail: Failer, path: tuple[str, ...], fields: Mapping[str, object], known: tuple[str, ...]
) -> None:
    for key in fields:
        if key not in known:
            fail(
                (*path, key),
                f"unknown key {key!r} in [{'.'.join(path)}] (known: {', '.join(known)})",
            )


def opt_str(
    fail: Failer, path: tuple[str, ...], fields: Mapping[str, object], key: str
) -> str | None:
    value = fields.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        fail((*path, key), f"{'.'.join(path)}.{key} must be a non-empty string")
    return value


def bool_field(
    fail: Failer, path: tuple[str, ...], fields: Mapping[str, object], key: str, *, default: bool
) -> bool:
    value = fields.get(key, default)
    if not isinstance(value, bool):
        fail((*path, key), f"{'.'.join(path)}.{key} must be true or false")
    return value


def choice(
    fail: Failer,
    path: tuple[str, ...],
    fields: Mapping[str, object],
    key: str,
    choices: tuple[str, ...],
) -> str:
    """`fields[key]`, one of `choices` (the first when absent)."""
    value = fields.get(key, choices[0])
    if value not in choices:
        fail((*path, key), f"{'.'.join(path)}.{key} must be one of: {', '.join(choices)}")
    return str(value)


def str_list(
    fail: Failer, path: tuple[str, ...], fields: Mapping[str, object], key: str
) -> tuple[str, ...]:
    value = fields.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
        fail((*path, key), f"{'.'.join(path)}.{key} must be a list of non-empty strings")
    return tuple(value)


_SYNTAX_LINE: Final = re.compile(r"at line (\d+)")


def deep_nesting_line(text: str, depth: int = 100) -> int:
    """The line where brackets and braces first nest `depth` deep (strings not told apart:
    good enough to point at a pathological nest)."""
    level = 0
    for index, char in enumerate(text):
        level += (char in "[{") - (char in "]}")
        if level >= depth:
            return text.count("\n", 0, index) + 1
    return 1


def syntax_error_line(message: str, text: str) -> int:
    match = _SYNTAX_LINE.search(message)
    if match:
        return int(match.group(1))
    # tomllib says "at end of document" when the error is only noticed at EOF.
    return max(1, text.count("\n") + (0 if text.endswith("\n") else 1))


class Failer:
    """Raises ConfigError for a key path, locating the line by scanning the text."""

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.text = text

    def __call__(self, path: tuple[str, ...], message: str) -> NoReturn:
        raise ConfigError(self.source, locate_key(self.text, path), message)


_HEADER: Final = re.compile(r"^\s*\[\[?\s*([^\[\]]+?)\s*\]\]?\s*(?:#.*)?$")
_SIMPLE_KEY: Final = r"""(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')"""
_KEY: Final = re.compile(rf"^\s*({_SIMPLE_KEY}(?:\s*\.\s*{_SIMPLE_KEY})*)\s*=")
_PART: Final = re.compile(r"""[A-Za-z0-9_-]+|"([^"]*)"|'([^']*)'""")


def locate_key(text: str, path: tuple[str, ...]) -> int:
    """Best line (1-based) for a key path: the key itself, else its table, else a parent.

    A scan, not a parser: it understands `[a.b]` headers, dotted and quoted keys, and
    skips the inside of multi-line strings; inline tables resolve to their key's line.
    """
    best_line, best_depth = 1, 0
    table: tuple[str, ...] = ()
    in_multiline = False
    for number, line in enumerate(text.splitlines(), start=1):
        was_multiline = in_multiline
        if (line.count('"""') + line.count("'''")) % 2 == 1:
            in_multiline = not in_multiline
        if was_multiline:
            continue
        header = _HEADER.match(line)
        if header:
            table = _split_key(header.group(1))
            found = table
        else:
            key = _KEY.match(line)
            if key is None:
                continue
            found = table + _split_key(key.group(1))
        depth = _common_prefix(found, path)
        if depth == len(found) and depth > best_depth:
            best_line, best_depth = number, depth
            if depth == len(path):
                break
    return best_line


def _split_key(dotted: str) -> tuple[str, ...]:
    parts = []
    for match in _PART.finditer(dotted):
        double, single = match.group(1), match.group(2)
        parts.append(double if double is not None else single if single is not None else match[0])
    return tuple(parts)


def _common_prefix(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    depth = 0
    for left, right in zip(a, b, strict=False):
        if left != right:
            break
        depth += 1
    return depth
