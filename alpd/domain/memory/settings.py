"""The `[memory]` table of config.toml.

    [memory]
    max_bytes = 2048     # the memory section of a new root's session context, in UTF-8
                         # bytes, heading included; 0 turns memory off for every root

An agent opts out on its own with `memory = false` in its `[agents.NAME]` table. The key is
snake_case, as docs/DESIGN fixed it (the older tables of the file are camelCase).
"""

from __future__ import annotations

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
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BYTES_CEILING:
        fail(
            ("memory", "max_bytes"),
            f"memory.max_bytes must be a whole number of bytes from 0 (off) to "
            f"{MAX_BYTES_CEILING}, not {value!r}",
        )
    return MemorySettings(max_bytes=value)


__all__ = ["DEFAULT_MAX_BYTES", "MEMORY_KEYS", "MemorySettings", "parse_memory_settings"]
