"""alp's Codex approval hook (protocol/codex_approvals.py): the `-c` override is TOML naming
`alp hook codex-approve` for shell commands only, and a run is started with it only when the
user's Codex config holds the trust `alp channel trust-codex` wrote."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from alpd.errors import RuntimeUnavailable
from alpd.runtimes.codex import hook_trusted, require_hook_trust
from protocol.codex_approvals import HOOK_HASH, HOOK_KEY, HOOK_NAME, HOOK_OVERRIDE


def test_the_override_is_toml_for_shell_commands_that_fails_closed() -> None:
    key, value = HOOK_OVERRIDE.split("=", 1)
    assert key == "hooks.PreToolUse"
    (group,) = tomllib.loads(f"v = {value}")["v"]
    assert group["matcher"] == "^Bash$"
    (hook,) = group["hooks"]
    assert hook["type"] == "command"
    assert f"hook {HOOK_NAME} || exit 2" in hook["command"]  # a failed hook blocks
    assert hook["timeout"] > 86400  # over approval_timeout's maximum: alpd answers first


def trust_file(home: Path, trusted_hash: str) -> dict[str, str]:
    home.mkdir(exist_ok=True)
    (home / "config.toml").write_text(
        f'model = "x"\n\n[hooks.state."{HOOK_KEY}"]\ntrusted_hash = "{trusted_hash}"\n'
    )
    return {"CODEX_HOME": str(home)}


def test_only_the_trust_of_this_definition_counts(tmp_path: Path) -> None:
    assert hook_trusted(trust_file(tmp_path / "a", HOOK_HASH))
    assert not hook_trusted(trust_file(tmp_path / "b", "sha256:" + "0" * 64))
    assert not hook_trusted({"CODEX_HOME": str(tmp_path / "none")})
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "config.toml").write_text("not toml [")
    assert not hook_trusted({"CODEX_HOME": str(tmp_path / "c")})


def test_an_untrusted_hook_refuses_the_run_saying_what_to_do(tmp_path: Path) -> None:
    require_hook_trust(trust_file(tmp_path / "a", HOOK_HASH))
    with pytest.raises(RuntimeUnavailable, match="alp channel trust-codex"):
        require_hook_trust({"CODEX_HOME": str(tmp_path / "none")})
