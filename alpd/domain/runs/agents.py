"""Agent definitions (roles) and the `[agents.*]` / `[runtimes.*]` tables of config.toml.

An AgentDefinition is the *only* source of what a run may do besides the request itself
(invariant 1 of docs/contract.md): it comes from the owner's config file, never from a
Thread. Each runtime has a built-in agent of the same name with the runtime's own defaults,
so `alp --runtime codex` works with an empty config; a config table of the same name
replaces it.

Config format (keys are camelCase, like the wire)::

    [agents.reviewer]
    runtime = "claude"                 # required unless the name is a built-in agent
    allowedTools = ["Read", "Grep"]
    disallowedTools = ["Bash"]
    permissionMode = "plan"
    workspace = "thread"               # "thread" | "cwd" | an absolute path
    delegatesTo = ["claude"]           # agents it may start children for
    instructions = "Review, do not edit."
    model = "sonnet"
    recap = false                      # its runs open without the thread's recap (default true)
    memory = false                     # its runs open without memory (default true)
    timeout = "30m"                    # a run longer than this is ended: `timed-out`
    budget_usd = 5.0                   # a run costing this much is ended: `budget-exceeded`
    budget_tokens = 2000000            # … or using this many tokens (input + output + cache)

    [agents.watch]
    runtime = "command"
    args = ["sh", "-c", "./check.sh"]  # fixed runtime arguments: a request may not add its own

    [handoff]                          # loop guards of handoffs between threads (defaults)
    hopBound = 3                       # send, reply, one more reply
    chainQuietSeconds = 600            # a chain quiet this long is over
    pairQuota = 6                      # handoffs per ordered pair of threads …
    pairWindowSeconds = 600            # … in this rolling window
    reservationSeconds = 60            # an abandoned send slot frees up after this

    [runtimes.claude]
    command = "/opt/claude/bin/claude"
    env = { CLAUDE_CONFIG_DIR = "/srv/claude" }
    prices = { sonnet = { input = 3.0, output = 15.0, cacheRead = 0.3, cacheWrite = 3.75 } }

    [recap]                            # the thread recap's summariser (alpd.domain.recap.config)
    summariser = "runtime"

    [memory]                           # memory across threads (alpd.domain.memory.settings)
    max_bytes = 2048                   # the section a new root gets; 0: none

Prices are USD per million tokens. A bad file raises `ConfigError(path, line, message)`:
syntax errors take the line tomllib reports, semantic ones (unknown key, wrong type, unknown
runtime or delegate) the line of the offending key or table, found by scanning the text.
Unknown keys are errors so a typo (`allowedTool`) never silently widens or narrows a role.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from typing import Final

import msgspec

from alpd.domain.channel_settings import ChannelSettings, parse_channel_settings
from alpd.domain.checkpoints.settings import CheckpointSettings, parse_checkpoint_settings
from alpd.domain.config_fields import (
    ConfigError,
    Failer,
    bool_field,
    choice,
    deep_nesting_line,
    opt_str,
    reject_unknown,
    str_list,
    syntax_error_line,
    table_of,
)
from alpd.domain.conversation.guards import LIMIT_KEYS, GuardLimits
from alpd.domain.history.search_settings import SearchSettings, parse_search_settings
from alpd.domain.hosts.lease import HostSettings, parse_host_settings
from alpd.domain.hosts.person import PersonSettings, parse_person_settings
from alpd.domain.memory.settings import MemorySettings, agent_memory_cap, parse_memory_settings
from alpd.domain.recap.config import RecapSettings, parse_recap_settings
from alpd.domain.runs.limits import (
    RunLimits,
    check_budget,
    check_timeout,
    check_tokens,
    parse_timeout,
)
from alpd.domain.spelling import did_you_mean
from alpd.domain.store_settings import parse_store_url
from alpd.domain.web_settings import WebSettings, parse_web_settings
from alpd.errors import AgentNotFound

BUILTIN_RUNTIMES: Final = ("claude", "codex", "command")
WORKSPACE_RULES: Final = ("thread", "cwd")
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_AGENT_KEYS: Final = (
    "runtime", "allowedTools", "disallowedTools", "permissionMode", "workspace", "delegatesTo",
    "instructions", "model", "args", "recap", "memory", "memory_max_bytes", "timeout",
    "budget_usd", "budget_tokens",
)  # fmt: skip
_RUNTIME_KEYS: Final = ("command", "env", "prices", "approvals")
_PRICE_KEYS: Final = ("input", "output", "cacheRead", "cacheWrite")


class AgentDefinition(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """A role: which runtime, which tools, which workspace, whom it may delegate to."""

    name: str
    runtime: str
    allowed_tools: tuple[str, ...] = ()
    disallowed_tools: tuple[str, ...] = ()
    permission_mode: str | None = None
    workspace_rule: str = "thread"
    delegates_to: tuple[str, ...] = ()
    instructions: str | None = None
    model: str | None = None
    #: runtime arguments fixed by the role (the `command` runtime's program and its arguments)
    args: tuple[str, ...] = ()
    #: whether its runs open with the thread's recap (derived, never authority)
    recap: bool = True
    #: whether its runs open with memory across threads (work state, never authority)
    memory: bool = True
    #: its own cap on the memory section, bytes (`memory_max_bytes`; None: `[memory] max_bytes`)
    memory_max_bytes: int | None = None
    #: its runs' time limit and cost cap (`timeout`, `budget_usd`), unless a request sets its own
    limits: RunLimits = RunLimits()


class ModelPrice(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """USD per million tokens for one model; overrides what the adapter ships."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


class RuntimeConfig(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """How to start one runtime: its program (None = find it on PATH) and extra env."""

    name: str
    command: str | None = None
    env: dict[str, str] = msgspec.field(default_factory=dict)
    prices: dict[str, ModelPrice] = msgspec.field(default_factory=dict)
    #: "chat": a headless Codex run asks a paired chat before each shell command
    approvals: str = "never"


class AgentsConfig(msgspec.Struct, frozen=True, kw_only=True):
    """Every agent (built-ins merged with the config's) and every runtime's settings."""

    agents: dict[str, AgentDefinition]
    runtimes: dict[str, RuntimeConfig]
    #: the loop guards of handoffs (`[handoff]`)
    handoff: GuardLimits = msgspec.field(default_factory=GuardLimits)
    #: the thread recap's summariser and its thresholds (`[recap]`)
    recap: RecapSettings = msgspec.field(default_factory=RecapSettings)
    #: the file the agents come from (named in errors); None for the built-in defaults
    source: str | None = None
    #: the `[web]` table (alpd.domain.web_settings)
    web: WebSettings = WebSettings()
    #: the `[search]` table: the meaning index's embedder (alpd.domain.history.search_settings)
    search: SearchSettings = SearchSettings()
    #: the `[memory]` table (alpd.domain.memory.settings)
    memory: MemorySettings = MemorySettings()
    #: the `[channels]` tables: the chat doors (alpd.domain.channel_settings)
    channels: ChannelSettings = ChannelSettings()
    #: the `[checkpoints]` table: file checkpoints of every root (alpd.domain.checkpoints)
    checkpoints: CheckpointSettings = CheckpointSettings()
    #: the `[host]` table: this host's name and lease (alpd.domain.hosts.lease)
    host: HostSettings = HostSettings()
    #: the `[person]` table: who this alpd's rows belong to (alpd.domain.hosts.person)
    person: PersonSettings = PersonSettings()
    #: `[store] url`: the PostgreSQL database shared by several hosts; None: SQLite in the
    #: home (docs/many-machines.md; `ALP_STORE_URL` overrides it)
    store_url: str | None = None

    def agent(self, name: str) -> AgentDefinition:
        """The agent called `name`, or AGENT_NOT_FOUND naming the agent, the known ones and
        the file that declares them."""
        found = self.agents.get(name)
        if found is None:
            known = sorted(self.agents)
            where = self.source or "config.toml"
            raise AgentNotFound(
                f"no agent {name!r}{did_you_mean(name, known)}; known agents: {', '.join(known)} "
                f"(agents are declared in {where}; `alp daemon reload` after editing it)",
                agent=name,
                knownAgents=known,
                config=self.source,
            )
        return found

    def runtime(self, name: str) -> RuntimeConfig:
        """Settings of runtime `name` (defaults when the config has no table for it)."""
        return self.runtimes.get(name) or RuntimeConfig(name=name)


def builtin_agents(runtimes: tuple[str, ...] = BUILTIN_RUNTIMES) -> dict[str, AgentDefinition]:
    """One agent per runtime, named after it, with that runtime's own defaults."""
    return {name: AgentDefinition(name=name, runtime=name) for name in runtimes}


def default_config() -> AgentsConfig:
    """The configuration of a home without config.toml."""
    return AgentsConfig(agents=builtin_agents(), runtimes={})


def parse_agents_config(
    toml_text: str,
    *,
    source: str,
    known_runtimes: tuple[str, ...] = BUILTIN_RUNTIMES,
    other_sections: frozenset[str] = frozenset(),
) -> AgentsConfig:
    """Parse config.toml; `source` is the path named in errors.

    `known_runtimes` is the adapter registry (plugins may add to it); `other_sections` are
    top-level tables owned by other parts of alpd, accepted here without being read.
    """
    try:
        data = tomllib.loads(toml_text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(source, syntax_error_line(str(exc), toml_text), str(exc)) from exc
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively.
        line = deep_nesting_line(toml_text)
        raise ConfigError(source, line, "arrays or tables nested too deeply to read") from None
    fail = Failer(source, toml_text)
    for key in data:
        known = _SECTIONS
        if key not in known and key not in other_sections:
            expected = ", ".join(repr(name) for name in _SECTIONS[:-1])
            fail((key,), f"unknown section {key!r} (expected {expected} or 'store')")
    runtimes = _parse_runtimes(fail, data.get("runtimes", {}), known_runtimes)
    agents = builtin_agents(known_runtimes)
    agents.update(_parse_agents(fail, data.get("agents", {}), known_runtimes))
    for agent in agents.values():
        for delegate in agent.delegates_to:
            if delegate not in agents:
                fail(
                    ("agents", agent.name, "delegatesTo"),
                    f"agent {agent.name!r}: delegatesTo names unknown agent {delegate!r}",
                )
    handoff = _parse_handoff(fail, data.get("handoff", {}))
    web = parse_web_settings(fail, data.get("web"))
    recap = parse_recap_settings(data.get("recap", {}), fail)
    search = parse_search_settings(fail, data.get("search"))
    memory = parse_memory_settings(fail, data.get("memory"))
    channels = parse_channel_settings(fail, data.get("channels"))
    checkpoints = parse_checkpoint_settings(fail, data.get("checkpoints"))
    host = parse_host_settings(fail, data.get("host"))
    person = parse_person_settings(fail, data.get("person"))
    store_url = parse_store_url(fail, data.get("store"))
    return AgentsConfig(
        agents=agents,
        runtimes=runtimes,
        handoff=handoff,
        web=web,
        recap=recap,
        search=search,
        memory=memory,
        channels=channels,
        checkpoints=checkpoints,
        host=host,
        person=person,
        store_url=store_url,
    )


#: the tables of config.toml besides the ones a caller parses itself (`other_sections`)
_SECTIONS: Final = (
    *("agents", "runtimes", "handoff", "web", "recap", "search", "memory", "channels"),
    *("checkpoints", "host", "person", "store"),
)


def _parse_handoff(fail: Failer, table: object) -> GuardLimits:
    """`[handoff]`: each key a positive number (`hopBound` and `pairQuota` whole ones)."""
    fields = table_of(fail, ("handoff",), table)
    reject_unknown(fail, ("handoff",), fields, tuple(LIMIT_KEYS))
    values: dict[str, float | int] = {}
    for key, value in fields.items():
        whole = key in ("hopBound", "pairQuota")
        if (
            isinstance(value, bool)
            or not isinstance(value, int if whole else (int, float))
            or value <= 0
        ):
            what = "a whole number" if whole else "a number of seconds"
            fail(("handoff", key), f"handoff.{key} must be {what} above 0, not {value!r}")
        values[LIMIT_KEYS[key]] = value if whole else float(value)
    return GuardLimits(**values)  # type: ignore[arg-type]


def _parse_agents(
    fail: Failer, table: object, known_runtimes: tuple[str, ...]
) -> dict[str, AgentDefinition]:
    agents: dict[str, AgentDefinition] = {}
    for name, body in table_of(fail, ("agents",), table).items():
        path = ("agents", name)
        if not _NAME.fullmatch(name):
            fail(path, f"agent name {name!r} must be letters, digits, '_', '.', '-'")
        fields = table_of(fail, path, body)
        reject_unknown(fail, path, fields, _AGENT_KEYS)
        runtime = opt_str(fail, path, fields, "runtime")
        if runtime is None:
            if name not in known_runtimes:
                fail(path, f"agent {name!r} needs a runtime")
            runtime = name
        if runtime not in known_runtimes:
            fail((*path, "runtime"), f"agent {name!r}: unknown runtime {runtime!r}")
        agents[name] = AgentDefinition(
            name=name,
            runtime=runtime,
            allowed_tools=str_list(fail, path, fields, "allowedTools"),
            disallowed_tools=str_list(fail, path, fields, "disallowedTools"),
            permission_mode=opt_str(fail, path, fields, "permissionMode"),
            workspace_rule=_workspace_rule(fail, path, fields),
            delegates_to=str_list(fail, path, fields, "delegatesTo"),
            instructions=opt_str(fail, path, fields, "instructions"),
            model=opt_str(fail, path, fields, "model"),
            args=str_list(fail, path, fields, "args"),
            recap=bool_field(fail, path, fields, "recap", default=True),
            memory=bool_field(fail, path, fields, "memory", default=True),
            memory_max_bytes=agent_memory_cap(fail, path, fields),
            limits=_limits(fail, path, fields),
        )
    return agents


def _limits(fail: Failer, path: tuple[str, ...], fields: Mapping[str, object]) -> RunLimits:
    timeout, budget = fields.get("timeout"), fields.get("budget_usd")
    seconds = usd = None
    try:
        if isinstance(timeout, str):
            seconds = parse_timeout(timeout)
        elif isinstance(timeout, int) and not isinstance(timeout, bool):
            seconds = check_timeout(timeout)
        elif timeout is not None:
            fail((*path, "timeout"), f'{".".join(path)}.timeout must be a duration: "30m"')
    except ValueError as exc:
        fail((*path, "timeout"), f"{'.'.join(path)}.timeout: {exc}")
    try:
        if isinstance(budget, int | float) and not isinstance(budget, bool):
            usd = check_budget(budget)
        elif budget is not None:
            fail((*path, "budget_usd"), f"{'.'.join(path)}.budget_usd must be a number of USD")
    except ValueError as exc:
        fail((*path, "budget_usd"), f"{'.'.join(path)}.budget_usd: {exc}")
    tokens = fields.get("budget_tokens")
    cap = None
    try:
        if isinstance(tokens, int) and not isinstance(tokens, bool):
            cap = check_tokens(tokens)
        elif tokens is not None:
            fail((*path, "budget_tokens"), f"{'.'.join(path)}.budget_tokens must be an integer")
    except ValueError as exc:
        fail((*path, "budget_tokens"), f"{'.'.join(path)}.budget_tokens: {exc}")
    return RunLimits(timeout_seconds=seconds, budget_usd=usd, budget_tokens=cap)


def _parse_runtimes(
    fail: Failer, table: object, known_runtimes: tuple[str, ...]
) -> dict[str, RuntimeConfig]:
    runtimes: dict[str, RuntimeConfig] = {}
    for name, body in table_of(fail, ("runtimes",), table).items():
        path = ("runtimes", name)
        if name not in known_runtimes:
            fail(path, f"unknown runtime {name!r} (known: {', '.join(known_runtimes)})")
        fields = table_of(fail, path, body)
        reject_unknown(fail, path, fields, _RUNTIME_KEYS)
        env = table_of(fail, (*path, "env"), fields.get("env", {}))
        for key, value in env.items():
            if not isinstance(value, str):
                fail((*path, "env", key), f"runtime {name!r}: env.{key} must be a string")
        runtimes[name] = RuntimeConfig(
            name=name,
            command=opt_str(fail, path, fields, "command"),
            env={key: str(value) for key, value in env.items()},
            prices=_prices(fail, (*path, "prices"), fields.get("prices", {})),
            approvals=choice(fail, path, fields, "approvals", ("never", "chat")),
        )
    return runtimes


def _prices(fail: Failer, path: tuple[str, ...], table: object) -> dict[str, ModelPrice]:
    prices: dict[str, ModelPrice] = {}
    for model, body in table_of(fail, path, table).items():
        fields = table_of(fail, (*path, model), body)
        reject_unknown(fail, (*path, model), fields, _PRICE_KEYS)
        numbers: dict[str, float] = {}
        for key, value in fields.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                fail((*path, model, key), f"price {model}.{key} must be a number >= 0")
            numbers[key] = float(value)
        prices[model] = msgspec.convert(numbers, ModelPrice)
    return prices


def _workspace_rule(fail: Failer, path: tuple[str, ...], fields: Mapping[str, object]) -> str:
    rule = opt_str(fail, path, fields, "workspace")
    if rule is None:
        return "thread"
    if rule not in WORKSPACE_RULES and not rule.startswith("/"):
        fail((*path, "workspace"), 'workspace must be "thread", "cwd" or an absolute path')
    return rule
