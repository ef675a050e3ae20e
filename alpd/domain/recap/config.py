"""The `[recap]` table of config.toml, and whether a summariser is available at all.

A thread's recap (headline, gist, open tasks) is kept by a cheap model in the background
(`alpd.domain.recap.summary`). Two summarisers exist:

* ``runtime`` (the default): the Claude Code the user already has, run as
  ``claude -p --model haiku`` with no tools, no MCP servers and no saved session; its own
  usage and cost are recorded on the refresh's `temp` execution.
* ``api``: the Anthropic Messages API, ``POST {apiUrl}/v1/messages`` with the key read from
  the environment variable named by ``apiKeyEnv`` (never from the config file).

Keys (camelCase, like the rest of the file), with their defaults::

    [recap]
    enabled = true             # false: no refresh; new roots get neither recap nor tail
    summariser = "runtime"     # "runtime" (claude -p) | "api"
    model = "haiku"            # runtime: the --model value; api: the model name
    minRoots = 2               # refresh once this many roots settled since the last one …
    minEntries = 12            # … or this many history entries were copied since it
    minIntervalSeconds = 120   # and never twice within this long for one thread
    backoffSeconds = 60        # after a failed refresh; doubles per failure …
    maxBackoffSeconds = 3600   # … up to this
    inputChars = 16000         # bound of what one refresh sends
    tailChars = 2000           # verbatim tail of the last exchange in a new root (0: none)
    timeoutSeconds = 120       # a refresh still running after this is cancelled
    apiUrl = "https://api.anthropic.com"
    apiKeyEnv = "ANTHROPIC_API_KEY"

Without a summariser (no `claude` on PATH for ``runtime``, an empty key variable for
``api``) the recap is off, and `recap_availability` says why and how to turn it on: every
place that would show a recap shows that instead, never a silent absence.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final, Literal, NoReturn

import msgspec

Summariser = Literal["runtime", "api"]
SUMMARISERS: Final[tuple[Summariser, ...]] = ("runtime", "api")
DEFAULT_API_MODEL: Final = "claude-haiku-4-5"

#: the API path is bounded well under the 30 s a headless execution may stay without a
#: process before reconcile calls it interrupted (`alpd.services.runs.reconcile`)
API_TIMEOUT_CAP_SECONDS: Final = 25.0


class RecapSettings(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """The `[recap]` table, defaults filled in."""

    enabled: bool = True
    summariser: Summariser = "runtime"
    model: str | None = None
    min_roots: int = 2
    min_entries: int = 12
    min_interval_seconds: float = 120.0
    backoff_seconds: float = 60.0
    max_backoff_seconds: float = 3600.0
    input_chars: int = 16_000
    tail_chars: int = 2_000
    timeout_seconds: float = 120.0
    api_url: str = "https://api.anthropic.com"
    api_key_env: str = "ANTHROPIC_API_KEY"

    def model_name(self) -> str:
        if self.model is not None:
            return self.model
        return "haiku" if self.summariser == "runtime" else DEFAULT_API_MODEL


class RecapAvailability(msgspec.Struct, frozen=True, kw_only=True):
    """Whether refreshes can run; when not, why (`reason`) and what to do (`hint`)."""

    available: bool
    summariser: Summariser
    reason: str | None = None
    hint: str | None = None


_INTS: Final = ("minRoots", "minEntries", "inputChars", "tailChars")
_SECONDS: Final = (
    "minIntervalSeconds",
    "backoffSeconds",
    "maxBackoffSeconds",
    "timeoutSeconds",
)
_STRINGS: Final = ("model", "apiUrl", "apiKeyEnv")
KEYS: Final = ("enabled", "summariser", *_INTS, *_SECONDS, *_STRINGS)

#: the smallest input bound that still holds a previous recap and something new
MIN_INPUT_CHARS: Final = 2_000


def parse_recap_settings(
    table: object, fail: Callable[[tuple[str, ...], str], NoReturn]
) -> RecapSettings:
    """`[recap]` → RecapSettings; `fail(key_path, message)` raises the config error."""
    if not isinstance(table, dict):
        fail(("recap",), "recap must be a table")
    values: dict[str, object] = {}
    for key, value in table.items():
        path = ("recap", key)
        if key not in KEYS:
            fail(path, f"unknown key {key!r} in [recap] (known: {', '.join(KEYS)})")
        if key == "enabled" and not isinstance(value, bool):
            fail(path, "recap.enabled must be true or false")
        if key == "summariser" and value not in SUMMARISERS:
            fail(path, 'recap.summariser must be "runtime" or "api"')
        if key in _INTS and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
            fail(path, f"recap.{key} must be a whole number >= 0")
        if key in _SECONDS and (
            isinstance(value, bool) or not isinstance(value, int | float) or value < 0
        ):
            fail(path, f"recap.{key} must be a number of seconds >= 0")
        if key in _STRINGS and (not isinstance(value, str) or not value):
            fail(path, f"recap.{key} must be a non-empty string")
        values[key] = value
    chars = values.get("inputChars")
    if isinstance(chars, int) and chars < MIN_INPUT_CHARS:
        fail(("recap", "inputChars"), f"recap.inputChars must be at least {MIN_INPUT_CHARS}")
    url = values.get("apiUrl")
    if isinstance(url, str) and not url.startswith(
        ("https://", "http://127.0.0.1", "http://[::1]")
    ):
        fail(("recap", "apiUrl"), "recap.apiUrl must be https:// (or http:// on loopback)")
    return msgspec.convert(values, RecapSettings)


def recap_availability(
    settings: RecapSettings, *, claude_program: str | None, environ: Mapping[str, str]
) -> RecapAvailability:
    """Whether a summariser is there. `claude_program` is the `claude` found (None: none)."""
    if not settings.enabled:
        return RecapAvailability(
            available=False,
            summariser=settings.summariser,
            reason="the recap is turned off in config.toml ([recap] enabled = false)",
            hint="set `enabled = true` under [recap] in config.toml, then `alp daemon reload`",
        )
    if settings.summariser == "runtime" and claude_program is None:
        return RecapAvailability(
            available=False,
            summariser="runtime",
            reason="no summariser: `claude` (Claude Code) was not found on alpd's PATH",
            hint=(
                "install Claude Code (npm install -g @anthropic-ai/claude-code) or set "
                '[runtimes.claude] command; or set [recap] summariser = "api" with '
                f"{settings.api_key_env} in alpd's environment; then `alp daemon reload`"
            ),
        )
    if settings.summariser == "api" and not environ.get(settings.api_key_env):
        return RecapAvailability(
            available=False,
            summariser="api",
            reason=f"no summariser: {settings.api_key_env} is not set in alpd's environment",
            hint=(
                f"start alpd with {settings.api_key_env} set, or set [recap] summariser = "
                '"runtime" to use Claude Code (`claude` on PATH)'
            ),
        )
    return RecapAvailability(available=True, summariser=settings.summariser)


__all__ = [
    "API_TIMEOUT_CAP_SECONDS",
    "KEYS",
    "RecapAvailability",
    "RecapSettings",
    "Summariser",
    "parse_recap_settings",
    "recap_availability",
]
