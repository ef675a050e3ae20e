"""Loading `config.toml` (agents and runtimes) from disk; the parsing itself is pure
(`alpd.domain.agents`). A missing file means the built-in defaults."""

from __future__ import annotations

from pathlib import Path

import msgspec

from alpd.domain.agents import AgentsConfig, default_config, parse_agents_config


def load_config(path: Path) -> AgentsConfig:
    """The agents config, or ConfigError naming the file, the line and what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return msgspec.structs.replace(default_config(), source=str(path))
    return msgspec.structs.replace(parse_agents_config(text, source=str(path)), source=str(path))
