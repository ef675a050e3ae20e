"""The `[checkpoints]` table of config.toml (pure).

    [checkpoints]
    enabled = true            # false: no checkpoint is taken (diff and restore have none)
    keep_roots = 50           # per workspace: the entries of the newest 50 roots (and restores)
    keep_days = 30            # … and none older than this
    max_bytes = "2GB"         # per workspace: past it, the oldest entries go first
    max_file_bytes = "50MB"   # a file larger than this is skipped (and said so)

Sizes are a whole number of bytes or a string with a unit (B, KB, MB, GB, TB: powers of
1024, as `du -h` reads). The caller passes the parsed table and a `fail(path, message)` that
raises ConfigError with the line.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, NoReturn

import msgspec

__all__ = [
    "CHECKPOINT_KEYS",
    "CheckpointSettings",
    "parse_checkpoint_settings",
    "parse_size",
]

CHECKPOINT_KEYS: Final = ("enabled", "keep_roots", "keep_days", "max_bytes", "max_file_bytes")
_UNITS: Final = {"": 1, "B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?B?)\s*$", re.IGNORECASE)

Fail = Callable[[tuple[str, ...], str], NoReturn]


class CheckpointSettings(msgspec.Struct, frozen=True, kw_only=True):
    enabled: bool = True
    keep_roots: int = 50
    keep_days: int = 30
    max_bytes: int = 2 * 1024**3
    max_file_bytes: int = 50 * 1024**2


def parse_size(value: object) -> int:
    """Bytes from `1048576` or `"1MB"` (ValueError naming what is accepted)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str):
        match = _SIZE.match(value)
        if match:
            unit = match.group(2).upper()
            unit = unit if unit.endswith("B") or not unit else unit + "B"
            return int(float(match.group(1)) * _UNITS[unit])
    raise ValueError(f'a size is a number of bytes or a string such as "2GB", not {value!r}')


def parse_checkpoint_settings(fail: Fail, table: object) -> CheckpointSettings:
    """CheckpointSettings from the `[checkpoints]` table (None when config.toml has none)."""
    if table is None:
        return CheckpointSettings()
    if not isinstance(table, dict):
        fail(("checkpoints",), "checkpoints must be a table")
    for key in table:
        if key not in CHECKPOINT_KEYS:
            fail(
                ("checkpoints", key),
                f"unknown key {key!r} in [checkpoints] (known: {', '.join(CHECKPOINT_KEYS)})",
            )
    values: dict[str, object] = {}
    enabled = table.get("enabled", True)
    if not isinstance(enabled, bool):
        fail(("checkpoints", "enabled"), "checkpoints.enabled must be true or false")
    values["enabled"] = enabled
    for key in ("keep_roots", "keep_days"):
        number = table.get(key)
        if number is None:
            continue
        if isinstance(number, bool) or not isinstance(number, int) or number < 1:
            fail(("checkpoints", key), f"checkpoints.{key} must be a whole number above 0")
        values[key] = number
    for key in ("max_bytes", "max_file_bytes"):
        if key not in table:
            continue
        try:
            size = parse_size(table[key])
        except ValueError as exc:
            fail(("checkpoints", key), f"checkpoints.{key}: {exc}")
        if size < 1:
            fail(("checkpoints", key), f"checkpoints.{key} must be above 0")
        values[key] = size
    return CheckpointSettings(**values)  # type: ignore[arg-type]
