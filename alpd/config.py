"""Loading `config.toml` (agents and runtimes) from disk; the parsing itself is pure
(`alpd.domain.runs.agents`). A missing file means the built-in defaults; a file that cannot be
read as UTF-8 text (a directory, unreadable, other bytes) is a ConfigError naming it."""

from __future__ import annotations

from pathlib import Path

import msgspec

from alpd.domain.config_fields import ConfigError
from alpd.domain.runs.agents import AgentsConfig, default_config, parse_agents_config


def load_config(path: Path) -> AgentsConfig:
    """The agents config, or ConfigError naming the file, the line and what is wrong."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return msgspec.structs.replace(default_config(), source=str(path))
    except IsADirectoryError:
        raise ConfigError(str(path), None, "is a directory, not a config file") from None
    except OSError as exc:
        raise ConfigError(str(path), None, f"cannot be read: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise ConfigError(
            str(path), line, f"is not UTF-8 text (byte 0x{raw[exc.start]:02x}); TOML is UTF-8"
        ) from None
    return msgspec.structs.replace(parse_agents_config(text, source=str(path)), source=str(path))
