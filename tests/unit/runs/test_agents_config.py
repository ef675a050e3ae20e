"""config.toml: `[agents.*]` and `[runtimes.*]` tables, built-in agents, located errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.domain.config_fields import ConfigError, locate_key
from alpd.domain.conversation.guards import GuardLimits
from alpd.domain.runs.agents import (
    BUILTIN_RUNTIMES,
    AgentDefinition,
    ModelPrice,
    default_config,
    parse_agents_config,
)
from alpd.errors import AgentNotFound

FULL = """\
# alp config
[runtimes.claude]
command = "/opt/claude/bin/claude"
env = { CLAUDE_CONFIG_DIR = "/srv/claude" }

[runtimes.claude.prices.sonnet]
input = 3
output = 15.0
cacheRead = 0.3

[agents.reviewer]
runtime = "claude"
allowedTools = ["Read", "Grep"]
disallowedTools = ["Bash"]
permissionMode = "plan"
workspace = "cwd"
delegatesTo = ["fixer"]
instructions = \"\"\"
Review only.
[agents.fake]
\"\"\"
model = "sonnet"

[agents.fixer]
runtime = "codex"
workspace = "/srv/repo"
"""


def error_of(text: str, other_sections: frozenset[str] = frozenset()) -> ConfigError:
    with pytest.raises(ConfigError) as caught:
        parse_agents_config(text, source="/home/u/.alp/config.toml", other_sections=other_sections)
    return caught.value


def test_empty_config_has_one_builtin_agent_per_runtime() -> None:
    config = parse_agents_config("", source="config.toml")
    assert config == default_config()
    for runtime in BUILTIN_RUNTIMES:
        assert config.agent(runtime) == AgentDefinition(name=runtime, runtime=runtime)


def test_full_config_parses_camel_case_keys() -> None:
    config = parse_agents_config(FULL, source="config.toml")
    reviewer = config.agent("reviewer")
    assert reviewer.allowed_tools == ("Read", "Grep")
    assert reviewer.disallowed_tools == ("Bash",)
    assert (reviewer.permission_mode, reviewer.workspace_rule) == ("plan", "cwd")
    assert reviewer.delegates_to == ("fixer",)
    assert reviewer.instructions == "Review only.\n[agents.fake]\n"
    assert config.agent("fixer").workspace_rule == "/srv/repo"
    claude = config.runtime("claude")
    assert claude.command == "/opt/claude/bin/claude"
    assert claude.env == {"CLAUDE_CONFIG_DIR": "/srv/claude"}
    assert claude.prices == {"sonnet": ModelPrice(input=3.0, output=15.0, cache_read=0.3)}
    assert config.runtime("codex").command is None


def test_an_agent_may_fix_its_runtime_args() -> None:
    text = '[agents.watch]\nruntime = "command"\nargs = ["sh", "-c", "./check.sh"]\n'
    assert parse_agents_config(text, source="c").agent("watch").args == ("sh", "-c", "./check.sh")
    assert error_of('[agents.watch]\nruntime = "command"\nargs = "sh -c x"\n').line == 3


def test_a_config_table_replaces_the_builtin_agent_of_that_name() -> None:
    config = parse_agents_config('[agents.claude]\nallowedTools = ["Read"]\n', source="c")
    assert config.agent("claude") == AgentDefinition(
        name="claude", runtime="claude", allowed_tools=("Read",)
    )


def test_unknown_agent_is_agent_not_found() -> None:
    with pytest.raises(AgentNotFound):
        default_config().agent("nobody")


def test_syntax_error_carries_tomllib_line() -> None:
    error = error_of('[agents.a]\nruntime = "claude"\nmodel = \n')
    assert (error.path, error.line) == ("/home/u/.alp/config.toml", 3)
    assert str(error).startswith("/home/u/.alp/config.toml:3: ")


def test_unknown_key_is_an_error_naming_key_and_line() -> None:
    error = error_of(FULL.replace('model = "sonnet"', 'model = "sonnet"\nallowedTool = ["x"]'))
    assert (
        error.line == 23 and "allowedTool" in error.message and "agents.reviewer" in error.message
    )


def test_unknown_key_in_an_inline_agent_table() -> None:
    error = error_of('[agents]\nbad = { runtime = "claude", color = "red" }\n')
    assert error.line == 2 and "color" in error.message


def test_wrong_type_points_at_the_key() -> None:
    error = error_of(FULL.replace('allowedTools = ["Read", "Grep"]', 'allowedTools = "Read"'))
    assert error.line == 13 and "allowedTools" in error.message


def test_delegates_to_unknown_agent_points_at_delegates_to() -> None:
    error = error_of(FULL.replace('delegatesTo = ["fixer"]', 'delegatesTo = ["ghost"]'))
    assert error.line == 17 and "ghost" in error.message


def test_unknown_runtime_in_agent_and_runtimes_table() -> None:
    agent = error_of(FULL.replace('runtime = "codex"', 'runtime = "gpt"'))
    assert agent.line == 25 and "gpt" in agent.message
    table = error_of('x = 1\n\n[runtimes.gemini]\ncommand = "g"\n', other_sections=frozenset({"x"}))
    assert table.line == 3 and "gemini" in table.message


def test_plugin_runtimes_are_accepted_when_known() -> None:
    known = (*BUILTIN_RUNTIMES, "gemini")
    config = parse_agents_config("[runtimes.gemini]\n", source="c", known_runtimes=known)
    assert config.agent("gemini").runtime == "gemini"


def test_agent_without_runtime_needs_a_builtin_name() -> None:
    error = error_of('\n[agents.helper]\nmodel = "x"\n')
    assert error.line == 2 and "needs a runtime" in error.message


def test_workspace_must_be_thread_cwd_or_absolute() -> None:
    error = error_of('[agents.a]\nruntime = "claude"\nworkspace = "relative/dir"\n')
    assert error.line == 3


def test_unknown_top_level_section_is_an_error_unless_owned_elsewhere() -> None:
    assert error_of("[agent.typo]\nruntime = 'claude'\n").line == 1
    parse_agents_config("[daemon]\nx = 1\n", source="c", other_sections=frozenset({"daemon"}))


def test_env_values_must_be_strings_and_prices_non_negative() -> None:
    assert error_of("[runtimes.codex]\nenv = { A = 1 }\n").line == 2
    prices = "[runtimes.codex]\n\n[runtimes.codex.prices.o3]\ninput = -1\n"
    assert error_of(prices).line == 4
    assert error_of("[runtimes.codex.prices.o3]\nfree = true\n").line == 2


def test_handoff_guards_are_configured_in_their_own_table() -> None:
    config = parse_agents_config(
        "[handoff]\nhopBound = 2\npairQuota = 10\npairWindowSeconds = 60\n"
        "chainQuietSeconds = 30.5\nreservationSeconds = 5\n",
        source="c",
    )
    assert config.handoff == GuardLimits(
        hop_bound=2,
        chain_quiet_seconds=30.5,
        pair_quota=10,
        pair_window_seconds=60.0,
        reservation_seconds=5.0,
    )
    assert default_config().handoff == GuardLimits()


@pytest.mark.parametrize(
    ("line", "expected"),
    [("hopBound = 0", 2), ("pairQuota = 1.5", 2), ("pairWindowSeconds = true", 2),
     ("reservationSeconds = -1", 2), ("hops = 3", 2)],
)  # fmt: skip
def test_a_bad_handoff_limit_is_an_error_at_its_line(line: str, expected: int) -> None:
    error = error_of(f"[handoff]\n{line}\n")
    assert error.line == expected and line.split()[0] in error.message


def test_agent_names_are_restricted() -> None:
    assert error_of('[agents."bad name"]\nruntime = "claude"\n').line == 1


def test_dotted_keys_are_located() -> None:
    text = '[agents]\nok.runtime = "claude"\nok.colour = "x"\n'
    assert error_of(text).line == 3


@given(st.sampled_from(["runtime", "model", "allowedTools"]), st.integers(0, 5))
def test_locate_key_finds_the_key_after_any_preamble(key: str, padding: int) -> None:
    text = "\n" * padding + '[agents.a]\n# comment\nmodel = "m"\nruntime = "r"\nallowedTools = []\n'
    expected = padding + {"model": 3, "runtime": 4, "allowedTools": 5}[key]
    assert locate_key(text, ("agents", "a", key)) == expected


def test_nesting_too_deep_for_tomllib_is_a_config_error_at_its_line() -> None:
    text = 'x = 1\n[agents.a]\nruntime = "claude"\nmodel = ' + "[" * 50_000 + "]" * 50_000
    error = error_of(text)
    assert error.line == 4
    assert "nested too deeply" in error.message


def test_a_mistyped_agent_or_runtime_gets_the_close_one() -> None:
    from alpd.errors import RuntimeNotFound
    from alpd.runtimes.registry import adapter

    with pytest.raises(AgentNotFound) as agent:
        default_config().agent("claud")
    assert "no agent 'claud' (did you mean 'claude'?); known agents:" in agent.value.message
    with pytest.raises(AgentNotFound) as far:
        default_config().agent("nobody")
    assert "did you mean" not in far.value.message
    with pytest.raises(RuntimeNotFound) as runtime:
        adapter("codx")
    assert "no runtime 'codx' (did you mean 'codex'?); known:" in runtime.value.message


def test_codex_approvals_is_never_or_chat() -> None:
    config = parse_agents_config('[runtimes.codex]\napprovals = "chat"\n', source="c")
    assert config.runtime("codex").approvals == "chat"
    assert parse_agents_config("", source="c").runtime("codex").approvals == "never"
    error = error_of('[runtimes.codex]\napprovals = "always"\n')
    assert error.line == 2 and "never, chat" in error.message
