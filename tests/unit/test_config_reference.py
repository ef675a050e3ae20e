"""docs/config.md names every key config.toml's parsers accept: each parser's own list of
keys (the one it refuses unknown keys against), so a key added tomorrow fails here until it
is documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from alpd.domain import channel_settings
from alpd.domain.checkpoints.settings import CHECKPOINT_KEYS
from alpd.domain.config_fields import ConfigError
from alpd.domain.conversation.guards import LIMIT_KEYS
from alpd.domain.history.search_settings import SEARCH_KEYS
from alpd.domain.hosts.lease import HOST_KEYS
from alpd.domain.hosts.person import PERSON_KEYS
from alpd.domain.memory.settings import MEMORY_KEYS
from alpd.domain.recap.config import KEYS as RECAP_KEYS
from alpd.domain.runs import agents
from alpd.domain.web_settings import WEB_KEYS

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "config.md"

TABLES: dict[str, tuple[str, ...]] = {
    "[agents.NAME]": agents._AGENT_KEYS,
    "[runtimes.NAME]": agents._RUNTIME_KEYS,
    "prices": agents._PRICE_KEYS,
    "[handoff]": tuple(LIMIT_KEYS),
    "[web]": WEB_KEYS,
    "[recap]": RECAP_KEYS,
    "[search]": SEARCH_KEYS,
    "[memory]": MEMORY_KEYS,
    "[channels]": channel_settings.SHARED_KEYS,
    "[channels.telegram]": channel_settings.TELEGRAM_KEYS,
    "[channels.wechat]": channel_settings.WECHAT_KEYS,
    "[checkpoints]": CHECKPOINT_KEYS,
    "[host]": HOST_KEYS,
    "[person]": PERSON_KEYS,
}


@pytest.mark.parametrize("table", list(TABLES))
def test_every_key_a_parser_accepts_is_documented(table: str) -> None:
    text = REFERENCE.read_text()
    assert table in text
    missing = [key for key in TABLES[table] if f"`{key}`" not in text]
    assert missing == [], f"docs/config.md lacks {table} keys {missing}"


def test_every_section_the_file_may_hold_is_documented() -> None:
    """The sections the parser names when it refuses an unknown one."""
    with pytest.raises(ConfigError, match="unknown section") as refused:
        agents.parse_agents_config("[nonsense]\n", source="config.toml")
    accepted = set(re.findall(r"'(\w+)'", refused.value.message)) - {"nonsense"}
    assert len(accepted) >= 9
    documented = set(re.findall(r"`\[(\w+)", REFERENCE.read_text()))
    assert accepted <= documented, accepted - documented
