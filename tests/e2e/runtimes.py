"""Where the pinned runtime CLIs live, by the same rule as ``install_runtimes.sh``.

The install script puts each CLI into ``$ALP_RUNTIMES_CACHE`` (default
``~/.cache/alp-runtimes``) under ``<name>-<version>/`` and writes the marker ``.alp-installed``
there only after the binary answered ``--version``. This module reads the same layout; it
never installs anything (``make runtimes`` does).

It also holds the environment and configuration that make each CLI run offline against the
scripted model server (``tests/e2e/model_server.py``), as ``docs/runtimes.md`` records them, so
that every e2e test (and the alpd config a test writes) uses the same settings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

CLAUDE_VERSION = "2.1.328"
CODEX_VERSION = "0.169.0"
INSTALL_HINT = "run `make runtimes` (bash tests/e2e/install_runtimes.sh)"


class RuntimeNotInstalled(RuntimeError):
    """The pinned CLI is not (completely) installed in the cache."""


@dataclass(frozen=True)
class Runtime:
    """One pinned CLI in the cache."""

    name: str
    version: str
    binary_name: str

    @property
    def folder(self) -> Path:
        return cache_dir() / f"{self.name}-{self.version}"

    @property
    def binary(self) -> Path:
        return self.folder / "node_modules" / ".bin" / self.binary_name

    def is_installed(self) -> bool:
        return (self.folder / ".alp-installed").is_file() and os.access(self.binary, os.X_OK)

    def require(self) -> Path:
        """The binary's path; ``RuntimeNotInstalled`` (saying how to fix it) if it is missing."""
        if not self.is_installed():
            raise RuntimeNotInstalled(
                f"{self.name} {self.version} is not installed under {self.folder}; {INSTALL_HINT}"
            )
        return self.binary


CLAUDE = Runtime("claude-code", CLAUDE_VERSION, "claude")
CODEX = Runtime("codex", CODEX_VERSION, "codex")


def cache_dir() -> Path:
    """``$ALP_RUNTIMES_CACHE``, else ``~/.cache/alp-runtimes``."""
    configured = os.environ.get("ALP_RUNTIMES_CACHE")
    return Path(configured) if configured else Path.home() / ".cache" / "alp-runtimes"


def claude_binary() -> Path:
    """Path of the pinned ``claude`` (a native executable)."""
    return CLAUDE.require()


def codex_binary() -> Path:
    """Path of the pinned ``codex`` (npm's node launcher for the native binary)."""
    return CODEX.require()


#: Sent as the API key; the scripted server accepts anything.
MODEL_API_KEY = "alp-e2e-dummy-key"
#: The variable Codex reads the provider's key from (``env_key`` in config.toml).
CODEX_KEY_ENV = "ALP_E2E_MODEL_KEY"
_CREDENTIAL_PREFIXES = ("ANTHROPIC_", "CLAUDE_", "OPENAI_", "CODEX_")


def _clean_base(base: Mapping[str, str] | None) -> dict[str, str]:
    """The base environment without any real credentials or runtime settings leaking in."""
    source = os.environ if base is None else base
    return {k: v for k, v in source.items() if not k.startswith(_CREDENTIAL_PREFIXES)}


def claude_env(
    server_url: str, home: Path, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment for ``claude`` against the scripted server; state under ``home/.claude``.

    ``ANTHROPIC_AUTH_TOKEN`` (sent as ``Authorization: Bearer``) rather than
    ``ANTHROPIC_API_KEY``: both work with ``-p``, but an API key makes the interactive TUI ask
    "Detected a custom API key … use it?" on first run, and a token does not.
    """
    env = _clean_base(base)
    env.update(
        HOME=str(home),
        CLAUDE_CONFIG_DIR=str(home / ".claude"),
        ANTHROPIC_BASE_URL=server_url,
        ANTHROPIC_AUTH_TOKEN=MODEL_API_KEY,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
    )
    return env


def seed_claude_for_tui(home: Path, trusted_dirs: Iterable[Path]) -> None:
    """Pre-answer the first-run dialogs of the interactive ``claude`` (onboarding, which
    otherwise checks api.anthropic.com and exits 1 offline, and the folder-trust question)."""
    config_dir = home / ".claude"
    config_dir.mkdir(parents=True, exist_ok=True)
    state = {
        "hasCompletedOnboarding": True,
        "projects": {str(d.resolve()): {"hasTrustDialogAccepted": True} for d in trusted_dirs},
    }
    (config_dir / ".claude.json").write_text(json.dumps(state))


def claude_transcript_path(home: Path, cwd: Path, session_id: str) -> Path:
    """Where Claude Code writes a session (docs/runtimes.md), for cwds up to 200 characters."""
    encoded = "".join(c if c.isascii() and c.isalnum() else "-" for c in str(cwd.resolve()))
    return home / ".claude" / "projects" / encoded / f"{session_id}.jsonl"


def write_codex_home(codex_home: Path, base_url: str, trusted_dirs: Iterable[Path] = ()) -> None:
    """``config.toml`` for ``codex`` against the scripted server at ``base_url`` (…/v1).

    analytics off (no DNS, no 5 s exit stall), plugins off (no api.github.com lookup), no
    unbounded reconnects, no update check, and no background app-server daemon for the TUI
    (it outlives the TUI otherwise). ``trusted_dirs`` skips the TUI's folder-trust dialog.
    """
    codex_home.mkdir(parents=True, exist_ok=True)
    lines = [
        'model = "gpt-scripted"',
        'model_provider = "scripted"',
        "check_for_update_on_startup = false",
        "[analytics]",
        "enabled = false",
        "[features]",
        "plugins = false",
        "unbounded_connection_retries = false",
        "daemon_auto_start = false",
        "[model_providers.scripted]",
        'name = "alp scripted model server"',
        f"base_url = {json.dumps(base_url)}",
        f'env_key = "{CODEX_KEY_ENV}"',
        'wire_api = "responses"',
        "request_max_retries = 0",
        "stream_max_retries = 0",
        "stream_idle_timeout_ms = 20000",
    ]
    for folder in trusted_dirs:
        lines += [f"[projects.{json.dumps(str(folder.resolve()))}]", 'trust_level = "trusted"']
    (codex_home / "config.toml").write_text("\n".join(lines) + "\n")


def codex_env(
    codex_home: Path, home: Path, base: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment for ``codex`` with the config of :func:`write_codex_home`."""
    env = _clean_base(base)
    env.update(HOME=str(home), CODEX_HOME=str(codex_home), **{CODEX_KEY_ENV: MODEL_API_KEY})
    return env
