"""The `command` runtime: any program, given after `--` or fixed by the agent's `args`.
History: unsupported.

A root's prompt (a push, a scheduled fire, `--prompt`) reaches the program twice: on its
standard input when it runs headless, and in `$ALP_PROMPT` — so a script can be pushed to
and scheduled like any agent. Used by tests and scripts to exercise threads without an
agent CLI.
"""

from __future__ import annotations

from alpd.domain.runs.agents import RuntimeConfig
from alpd.domain.runs.policy import Policy
from alpd.errors import InvalidArgument
from alpd.runtimes.base import (
    FoundSession,
    LaunchContext,
    LaunchSpec,
    RunFacts,
    find_program,
    label_env,
)


class CommandRuntime:
    name = "command"
    supports_interactive = True
    supports_headless = True
    #: an arbitrary program has no hook to ask with; deliveries wait for the next round
    takes_injection = False
    install_hint = (
        "give the command after `--`, e.g. `alp thread continue ID --runtime command -- make test`"
    )

    def locate_program(self, config: RuntimeConfig, policy: Policy, args: tuple[str, ...]) -> str:
        if not args:
            raise InvalidArgument(
                "the command runtime runs the arguments after `--`, and none were given",
                hint=self.install_hint,
            )
        return find_program(args[0], None, self.install_hint)

    def discover_session(self, run: RunFacts) -> FoundSession | None:
        return None

    def launch_spec(self, policy: Policy, ctx: LaunchContext) -> LaunchSpec:
        env = label_env(ctx)
        if ctx.prompt is not None:
            env["ALP_PROMPT"] = ctx.prompt
        return LaunchSpec(
            argv=[ctx.program, *ctx.args[1:]],
            env=env,
            cwd=policy.workspace,
            stdin=ctx.prompt,
        )
