"""The `[web]` table of config.toml."""

from __future__ import annotations

import pytest

from alpd.domain.config_fields import ConfigError
from alpd.domain.runs.agents import parse_agents_config
from alpd.domain.web_settings import WebSettings


def web_of(text: str) -> WebSettings:
    return parse_agents_config(text, source="config.toml").web


def test_no_table_means_off_on_a_free_port() -> None:
    assert web_of("") == WebSettings(enabled=False, port=None)


def test_enabled_and_port_are_read() -> None:
    assert web_of("[web]\nenabled = true\nport = 8765\n") == WebSettings(enabled=True, port=8765)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("[web]\nhost = '0.0.0.0'\n", 2, "unknown key 'host'"),
        ("[web]\nport = 80\n", 2, "from 1024 to 65535"),
        ("[web]\nport = 70000\n", 2, "from 1024 to 65535"),
        ("[web]\nport = '8765'\n", 2, "whole number"),
        ("[web]\nport = true\n", 2, "whole number"),
        ("[web]\nenabled = 'yes'\n", 2, "true or false"),
        ("web = 1\n", 1, "must be a table"),
    ],
)
def test_a_bad_web_table_names_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        web_of(text)
    assert caught.value.line == line
    assert words in str(caught.value)
