"""The `[memory]` table of config.toml.

    [memory]
    max_bytes = 2048     # the memory section of a new root's session context, in UTF-8
                         # bytes, heading included; 0 turns memory off for every root

An agent opts out on its own with `memory = false` in its `[agents.NAME]` table, or sets its
own cap with `memory_max_bytes = N` there (0: none for its runs); `max_bytes = 0` here still
turns memory off for every agent. The keys are snake_case, as docs/DESIGN fixed them (the
older tables of the file are camelCase).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import msgspec

from alpd.domain.config_fields import Failer, reject_unknown, table_of

MEMORY_KEYS: Final = ("max_bytes",)
#: a bound on the bound: the section is a reminder, not a document (64 KiB)
MAX_BYTES_CEILING: Final = 65_536
DEFAULT_MAX_BYTES: Final = 2048


class MemorySettings(msgspec.Struct, frozen=True, kw_only=True):
    max_bytes: int = DEFAULT_MAX_BYTES


def parse_memory_settings(fail: Failer, table: object) -> MemorySettings:
    if table is None:
        return MemorySettings()
    fields = table_of(fail, ("memory",), table)
    reject_unknown(fail, ("memory",), fields, MEMORY_KEYS)
    value = fields.get("max_bytes", DEFAULT_MAX_BYTES)
    return MemorySettings(max_bytes=parse_max_bytes(fail, ("memory", "max_bytes"), value))


def agent_memory_cap(
    fail: Failer, path: tuple[str, ...], fields: Mapping[str, object]
) -> int | None:
    """`[agents.NAME] memory_max_bytes`: the agent's own cap (None: `[memory] max_bytes`)."""
    value = fields.get("memory_max_bytes")
    return None if value is None else parse_max_bytes(fail, (*path, "memory_max_bytes"), value)


def parse_max_bytes(fail: Failer, path: tuple[str, ...], value: object) -> int:
    """A memory cap in bytes (`[memory] max_bytes`, `[agents.NAME] memory_max_bytes`)."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BYTES_CEILING:
        fail(
            path,
            f"{'.'.join(path)} must be a whole number of bytes from 0 (off) to "
            f"{MAX_BYTES_CEILING}, not {value!r}",
        )
    return int(value)


__all__ = [
    "DEFAULT_MAX_BYTES",
    "MEMORY_KEYS",
    "MemorySettings",
    "agent_memory_cap",
    "parse_max_bytes",
    "parse_memory_settings",
]
