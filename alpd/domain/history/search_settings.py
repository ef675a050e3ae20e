"""The `[search]` table of config.toml: which embedder the meaning index uses (pure).

    [search]
    embedder = "model2vec"        # "model2vec" (default) | "openai" | "off"
    model = "~/.cache/alp/models/potion-base-8M"
                                  # model2vec: the model's directory (default: that one);
                                  # openai: the model name the endpoint is asked for (required)
    endpoint = "http://127.0.0.1:11434/v1"
                                  # openai only: any OpenAI-compatible base URL (default: a
                                  # local Ollama); nothing else is ever sent anywhere
    apiKeyEnv = "ALP_SEARCH_API_KEY"   # openai: the variable holding the key, if any …
    apiKeyFile = "~/.alp/search.key"   # … or a file only its owner can read (0600)

A model2vec directory is only ever read: alpd downloads nothing (docs/search.md says how a
person fetches a model). The caller passes the parsed table and a `fail(path, message)`
that raises ConfigError with the line.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, Literal, NoReturn

import msgspec

__all__ = [
    "DEFAULT_ENDPOINT",
    "DEFAULT_KEY_ENV",
    "DEFAULT_MODEL_NAME",
    "EMBEDDERS",
    "SEARCH_KEYS",
    "SearchSettings",
    "parse_search_settings",
]

Embedder = Literal["model2vec", "openai", "off"]
EMBEDDERS: Final[tuple[Embedder, ...]] = ("model2vec", "openai", "off")
SEARCH_KEYS: Final = ("embedder", "model", "endpoint", "apiKeyEnv", "apiKeyFile")
#: the directory name the daemon looks for under the cache when `model` is not set
DEFAULT_MODEL_NAME: Final = "potion-base-8M"
DEFAULT_ENDPOINT: Final = "http://127.0.0.1:11434/v1"
DEFAULT_KEY_ENV: Final = "ALP_SEARCH_API_KEY"

Fail = Callable[[tuple[str, ...], str], NoReturn]


class SearchSettings(msgspec.Struct, frozen=True, kw_only=True):
    embedder: Embedder = "model2vec"
    #: None: the default model directory (model2vec); required for openai
    model: str | None = None
    endpoint: str = DEFAULT_ENDPOINT
    api_key_env: str = DEFAULT_KEY_ENV
    api_key_file: str | None = None


def parse_search_settings(fail: Fail, table: object) -> SearchSettings:
    """SearchSettings from the `[search]` table (None when config.toml has none)."""
    if table is None:
        return SearchSettings()
    if not isinstance(table, dict):
        fail(("search",), "search must be a table")
    for key in table:
        if key not in SEARCH_KEYS:
            fail(
                ("search", key),
                f"unknown key {key!r} in [search] (known: {', '.join(SEARCH_KEYS)})",
            )
    strings: dict[str, str] = {}
    for key in SEARCH_KEYS:
        value = table.get(key)
        if value is None:
            continue
        if not isinstance(value, str) or not value.strip():
            fail(("search", key), f"search.{key} must be a non-empty string")
        strings[key] = value
    embedder = strings.get("embedder", "model2vec")
    if embedder not in EMBEDDERS:
        fail(
            ("search", "embedder"),
            f"search.embedder must be one of {', '.join(EMBEDDERS)}, not {embedder!r}",
        )
    if embedder == "openai" and "model" not in strings:
        fail(
            ("search", "model"),
            'search.model must name the endpoint\'s embedding model (e.g. "nomic-embed-text") '
            'when embedder = "openai"',
        )
    endpoint = strings.get("endpoint", DEFAULT_ENDPOINT)
    if not endpoint.startswith(("http://", "https://")):
        fail(("search", "endpoint"), "search.endpoint must be an http:// or https:// URL")
    return SearchSettings(
        embedder=embedder,
        model=strings.get("model"),
        endpoint=endpoint.rstrip("/"),
        api_key_env=strings.get("apiKeyEnv", DEFAULT_KEY_ENV),
        api_key_file=strings.get("apiKeyFile"),
    )
