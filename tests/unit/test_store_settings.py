"""`[store] url` in config.toml, and `ALP_STORE_URL` over it (docs/config.md)."""

from __future__ import annotations

import pytest

from alpd.domain.config_fields import ConfigError
from alpd.domain.runs.agents import parse_agents_config
from alpd.store.db import store_url


def test_no_store_section_is_sqlite_in_the_home() -> None:
    assert parse_agents_config("", source="c.toml").store_url is None


def test_a_postgresql_url_is_read() -> None:
    config = parse_agents_config('[store]\nurl = "postgresql://alice@db/alp"\n', source="c.toml")
    assert config.store_url == "postgresql://alice@db/alp"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('[store]\nurl = "sqlite:///x.db"\n', "must be a PostgreSQL URL"),
        ("[store]\nurl = 5\n", "must be a PostgreSQL URL"),
        ('[store]\nhost = "db"\n', "unknown key 'host' in [store]"),
        ('store = "postgresql://db/alp"\n', "store must be a table"),
    ],
)
def test_anything_else_in_store_is_refused_with_the_reason(text: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says.replace("[", r"\[").replace("]", r"\]")):
        parse_agents_config(text, source="c.toml")


def test_the_environment_overrides_the_config() -> None:
    assert store_url({"ALP_STORE_URL": "postgresql://b/alp"}, "postgresql://a/alp") == (
        "postgresql://b/alp"
    )
    assert store_url({}, "postgresql://a/alp") == "postgresql://a/alp"
    assert store_url({}, None) is None
