"""Where the pinned runtime CLIs live, by the same rule as ``install_runtimes.sh``.

The install script puts each CLI into ``$ALP_RUNTIMES_CACHE`` (default
``~/.cache/alp-runtimes``) under ``<name>-<version>/`` and writes the marker ``.alp-installed``
there only after the binary answered ``--version``. This module reads the same layout; it
never installs anything (``make runtimes`` does).
"""

from __future__ import annotations

import os
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
