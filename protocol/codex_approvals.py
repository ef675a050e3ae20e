"""alp's Codex approval hook: the one definition the daemon passes to a headless Codex run
(`[runtimes.codex] approvals = "chat"`) and the client asks Codex to trust (`alp channel
trust-codex`), so both name exactly the same hook (docs/channels.md, "Codex").

Codex runs a hook only once the person trusted its exact definition: its config keeps, per
hook key, the `trusted_hash` of the definition trusted. The hook is passed on Codex's command
line (`-c`), so its key names Codex's session-flags layer and its position there; the
definition never changes with where alp is installed (the hook finds alp through `ALP_BIN`,
which every run has), so one trust holds across upgrades of alp until this text changes.

Stdlib only, pure: the thin client imports it.
"""

from __future__ import annotations

#: the `-c` override that installs the hook: every shell command (Codex names its shell
#: tools `Bash` to hooks) asks `alp hook codex-approve`; a hook that fails (alp not found,
#: alpd unreachable) exits 2, which Codex reads as a block — never as an allow. Its timeout
#: is over `[channels] approval_timeout`'s maximum (86,400 s): alpd denies first.
HOOK_OVERRIDE = (
    'hooks.PreToolUse=[{matcher="^Bash$",hooks=[{type="command",'
    'command="\\"${ALP_BIN:-alp}\\" hook codex-approve || exit 2",'
    'timeout=90000,statusMessage="asking the person on a paired chat"}]}]'
)
#: the key Codex keeps the hook's trust under (`hooks.state.<key>.trusted_hash`)
HOOK_KEY = "/<session-flags>/config.toml:pre_tool_use:0:0"
#: the hook's hash as codex-cli 0.169.0 reports it (`hooks/list`'s `currentHash`); alp does
#: not compute it — the e2e test reads it from the real Codex and compares
HOOK_HASH = "sha256:62901ecb08c1f8a09d5ac343f5d040b92c2a90ab9c90f2f4fc566784c5cc3c60"
#: the hook's name (`alp hook NAME`)
HOOK_NAME = "codex-approve"
