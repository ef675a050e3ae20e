"""Roots of a thread: continue (open root n+1), attach, settle (→ projection), wait, show.

`continue` and `settle` each run as one store unit under the thread's lease: continue reads
the current snapshot (verified), binds the new root's policy to it and inserts the root
(`alpd.services.runs.reserve`); settle records the outcome and projects the root's
checkpoint into revision n+1 in the same transaction (`alpd.services.runs.settle`), so a crash
leaves the thread at revision n or n+1, never between. This module prepares a root (agent,
runtime, program), starts a headless one under the supervisor, attaches an interactive one,
and publishes each change as `execution/changed`.
"""

# long: the lifecycle of a root in one class (continue, attach, settle, wait, show, the
# headless start and its failure paths); splitting it is issue-worthy, not a side edit.

from __future__ import annotations

import contextlib
import os
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import msgspec
import structlog

from alpd.domain.ids import EXECUTION_PREFIX
from alpd.domain.runs.agents import AgentDefinition, AgentsConfig
from alpd.domain.runs.limits import RunLimits
from alpd.domain.runs.outcomes import outcome_of
from alpd.domain.runs.policy import (
    Origin,
    Policy,
    PolicyRequest,
    build_policy,
    check_args,
    run_args,
)
from alpd.domain.secrets.filter import redact
from alpd.errors import (
    ExecutionPolicyTampered,
    ExecutionSettled,
    HostLeaseLost,
    InvalidArgument,
    SpawnFailed,
)
from alpd.runtimes.base import LaunchSpec
from alpd.runtimes.registry import adapter as runtime_adapter
from alpd.services.context import Caller, Daemon
from alpd.services.history.discovery import discover_sessions
from alpd.services.runs.attach import refuse_foreign_process
from alpd.services.runs.dirs import Paths
from alpd.services.runs.leases import Leases
from alpd.services.runs.reconcile import reconcile
from alpd.services.runs.reserve import InUnit, Prepared, reserve_root
from alpd.services.runs.rows import (
    execution_from_record,
    load_execution,
    owned_execution,
    verified_policy,
)
from alpd.services.runs.settle import settle_execution
from alpd.services.threads.lifecycle import ThreadService
from alpd.services.threads.workspaces import place_root
from alpd.store.db import Tx
from alpd.store.runs import execution_by_id, execution_head, record_running
from alpd.supervisor import cgroups
from alpd.supervisor.processes import ProcessIdentity, descendants, identify
from alpd.supervisor.supervisor import ExitReport, Supervisor
from alpd.workspace import workspace_of
from protocol import jsonrpc
from protocol import messages as m

DEFAULT_AGENT = "claude"

log = structlog.get_logger("alpd.executions")

AfterSettle = Callable[[str], Awaitable[None]]
#: told of each clear or undo: (the thread, the context revision the step wrote)
AfterStep = Callable[[str, int], Awaitable[None]]
#: told of each root reserved, before its program starts (the file checkpoint before it)
BeforeStart = Callable[[str], Awaitable[None]]


class Executions:
    def __init__(self, daemon: Daemon, paths: Paths, agents: AgentsConfig, leases: Leases) -> None:
        self.d = daemon
        self.paths = paths
        self.agents = agents
        self.leases = leases
        self.threads = ThreadService(daemon)
        self.supervisor: Supervisor | None = None
        self.after_settle: list[AfterSettle] = []
        self.after_step: list[AfterStep] = []
        self.before_start: list[BeforeStart] = []
        self._settled: dict[str, anyio.Event] = {}
        #: settles in flight, their after-settle hooks included (`settles_done`)
        self._settling = 0
        self._settling_changed = anyio.Event()
        self.environ: dict[str, str] = dict(os.environ)

    # publishing

    def publish(self, execution: m.Execution, change: str) -> None:
        frame = jsonrpc.encode_notification(
            "execution/changed", m.ExecutionChanged(execution=execution, change=change)
        )
        self.d.events.publish("execution/changed", frame, execution.thread_id)

    # continue

    def resolve_agent(self, agent: str | None, runtime: str | None) -> AgentDefinition:
        if agent is None and runtime is not None and runtime not in self.agents.agents:
            runtime_adapter(runtime)  # RUNTIME_NOT_FOUND, naming the known runtimes
        name = agent or runtime or DEFAULT_AGENT
        definition = self.agents.agent(name)
        if runtime is not None and definition.runtime != runtime:
            raise InvalidArgument(
                f"agent {definition.name!r} runs on {definition.runtime!r}, not {runtime!r}; "
                "name an agent of that runtime or drop --runtime",
                agent=definition.name,
                runtime=runtime,
            )
        return definition

    def prepare(
        self, caller: Caller, params: m.ContinueParams, origin: Origin | None = None
    ) -> Prepared:
        """Everything about a new root that needs no thread: agent, runtime, program.

        Done before any write, so a missing runtime leaves nothing behind (not even the
        empty thread of a failed `alp`)."""
        agent = self.resolve_agent(params.agent, params.runtime)
        runtime = runtime_adapter(agent.runtime)
        if params.headless and not runtime.supports_headless:
            raise InvalidArgument(f"the {runtime.name} runtime cannot run headless")
        if not params.headless and not runtime.supports_interactive:
            raise InvalidArgument(f"the {runtime.name} runtime cannot run interactive")
        request = PolicyRequest(
            agent=agent.name,
            kind=params.kind,
            headless=params.headless,
            workspace=workspace_of(params.cwd or "/"),
            origin=origin or Origin(door=params.door, by=f"uid:{caller.uid}"),
            runtime=agent.runtime,
            cwd=params.cwd,
            args=tuple(params.args),
            limits=RunLimits(
                timeout_seconds=params.timeout_seconds,
                budget_usd=params.budget_usd,
                budget_tokens=params.budget_tokens,
            ),
        )
        config = self.agents.runtime(agent.runtime)
        policy = build_policy(agent, request, None)
        program = runtime.locate_program(config, policy, run_args(agent, request))
        return Prepared(agent, runtime, request, config, program)

    async def continue_thread(
        self,
        caller: Caller,
        params: m.ContinueParams,
        *,
        prepared: Prepared | None = None,
        addendum: str | None = None,
        in_unit: InUnit | None = None,
    ) -> m.ContinueResult:
        """Open root n+1. `addendum` is a derived section appended to its session context
        (what woke a background root); `in_unit` commits with the root or not at all."""
        # The thread's repository decides where the root runs (docs/many-machines.md).
        placement = await place_root(self.d.store, params.thread_id, params.cwd)
        if placement.cwd != params.cwd:
            origin = prepared.request.origin if prepared is not None else None
            params = msgspec.structs.replace(params, cwd=placement.cwd)
            prepared = self.prepare(caller, params, origin)
        prepared = prepared or self.prepare(caller, params)
        await self.reconcile_thread(caller, params.thread_id)
        execution_id = self.d.clock.new_id(EXECUTION_PREFIX)
        unit = reserve_root(
            caller,
            params,
            prepared,
            execution_id=execution_id,
            at=self.d.clock.now_iso(),
            paths=self.paths,
            store=self.d.store,
            recap=self.agents.recap,
            memory=self.agents.memory,
            addendum=addendum,
            in_unit=in_unit,
            thread_sets=placement.sets,
            host=self.d.host,
        )
        async with self.leases.thread(params.thread_id):
            result, spec, policy = await self.d.store.write(unit)
        self._settled[execution_id] = anyio.Event()
        self.publish(result.execution, "reserved")
        for hook in self.before_start:
            try:
                await hook(execution_id)
            except Exception:
                log.exception("before_start_failed", execution=execution_id)
        if params.headless:
            args = run_args(prepared.agent, prepared.request)
            result = await self._start_headless(caller, result, spec, policy, args)
        return result

    async def check_stored_policy(
        self, execution_id: str, policy: Policy, args: tuple[str, ...]
    ) -> None:
        """Before a run is spawned: its stored policy, re-hashed, is the one its argv was
        built from, and `args` (the verbatim arguments in that argv, which no store holds)
        are the ones it authorized — their digest is its `argsDigest`
        (EXECUTION_POLICY_TAMPERED otherwise; nothing is started)."""
        record = await execution_by_id(self.d.store, execution_id)
        if record is None or verified_policy(record) != policy:
            raise ExecutionPolicyTampered(
                f"execution {execution_id}'s stored policy is not the one it was built with",
                executionId=execution_id,
            )
        try:
            check_args(verified_policy(record), args)
        except ExecutionPolicyTampered as exc:
            exc.data.setdefault("executionId", execution_id)
            raise

    async def _start_headless(
        self,
        caller: Caller,
        result: m.ContinueResult,
        spec: LaunchSpec,
        policy: Policy,
        args: tuple[str, ...],
    ) -> m.ContinueResult:
        assert self.supervisor is not None
        execution = result.execution
        exec_dir = self.paths.exec_dir(execution.id)
        try:
            await self.check_stored_policy(execution.id, policy, args)
        except ExecutionPolicyTampered as exc:
            failed = m.SettleParams(
                execution_id=execution.id, outcome="failed", summary=exc.message
            )
            await self.settle(caller, failed)
            raise
        try:
            running = await self.spawn_running(execution.id, spec, exec_dir)
        except SpawnFailed as exc:
            settled = await self.settle(
                caller,
                m.SettleParams(execution_id=execution.id, outcome="failed", summary=exc.message),
                output_tail=exc.message,
            )
            return m.ContinueResult(
                thread=result.thread,
                execution=settled,
                session_context_path=result.session_context_path,
            )
        return m.ContinueResult(
            thread=result.thread,
            execution=running,
            session_context_path=result.session_context_path,
        )

    async def spawn_running(
        self, execution_id: str, spec: LaunchSpec, exec_dir: Path
    ) -> m.Execution:
        """Spawn a headless run and record it `running` with its pid before its program
        starts: a call to alp from its first instruction is recognised (issue 21.22)."""
        assert self.supervisor is not None
        running: list[m.Execution] = []

        async def record(identity: ProcessIdentity) -> None:
            running.append(await self.mark_running(execution_id, identity))

        await self.supervisor.spawn(execution_id, spec, exec_dir, self.environ, before_start=record)
        return running[0]

    async def mark_running(self, execution_id: str, identity: ProcessIdentity) -> m.Execution:
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> m.Execution:
            await record_running(
                tx,
                execution_id,
                pid=identity.pid,
                start_time=identity.start_time,
                boot_id=identity.boot_id,
                at=at,
            )
            return execution_from_record(await load_execution(tx, execution_id))

        execution = await self.d.store.write(unit)
        self.publish(execution, "running")
        return execution

    # attach (interactive runs started by the client)

    async def attach(self, caller: Caller, params: m.AttachParams) -> m.Execution:
        record = await owned_execution(self.d.store, caller, params.execution_id)
        if record.status == "settled":
            raise ExecutionSettled(f"execution {params.execution_id} has settled")
        if record.headless:
            raise InvalidArgument("a headless execution is supervised by alpd, not attached")
        identity = identify(params.pid)
        if identity is None:
            raise InvalidArgument(f"no process {params.pid}", pid=params.pid)
        refuse_foreign_process(caller, record.launcher_pid, params.pid)
        groups = cgroups.active()
        if groups is not None:
            # Into the run's cgroup with what it started so far: from now on nothing it
            # starts can leave the run by setsid or a double fork.
            groups.join(params.execution_id, [params.pid, *descendants(params.pid)])
        return await self.mark_running(params.execution_id, identity)

    # settle

    async def settle(
        self, caller: Caller | None, params: m.SettleParams, *, output_tail: str | None = None
    ) -> m.Execution:
        """Settle the execution, then run the after-settle hooks (counted in flight until
        they are done: `settles_done`)."""
        self._settling += 1
        try:
            return await self._settle(caller, params, output_tail)
        finally:
            self._settling -= 1
            self._settling_changed.set()
            self._settling_changed = anyio.Event()

    async def settles_done(self) -> None:
        """Return once no settle is in flight, its after-settle hooks (report, hand-back,
        delivery wake) included: what `daemon/sweep` waits for first."""
        while self._settling:
            await self._settling_changed.wait()

    async def _settle(
        self, caller: Caller | None, params: m.SettleParams, output_tail: str | None
    ) -> m.Execution:
        at = self.d.clock.now_iso()
        # What a run printed and what a client says of it are stored (and projected into the
        # thread's context) secret-filtered, whoever reports them.
        if params.summary:
            params = msgspec.structs.replace(params, summary=redact(params.summary).text)
        if output_tail:
            output_tail = redact(output_tail).text

        unit = settle_execution(caller, params, output_tail, at, host=self.d.host_id)
        head = await execution_head(self.d.store, params.execution_id)
        if head is not None and head.native_session_id is None:
            # Last chance to learn where its transcript is (an interactive Codex run that
            # ended before a tick saw its open rollout).
            await self.discover_native_sessions(params.execution_id)
        if head is not None and head.is_root and head.thread_id is not None:
            # Settling a root moves its thread: under the thread lease, like continue.
            async with self.leases.thread(head.thread_id):
                execution, thread = await self.d.store.write(unit)
        else:
            execution, thread = await self.d.store.write(unit)
        self.publish(execution, "settled")
        groups = cgroups.active()
        if groups is not None:
            groups.remove(execution.id)  # when empty: processes left behind stay the run's
        event = self._settled.pop(execution.id, None)
        if event is not None:
            event.set()
        if thread is not None:
            frame = jsonrpc.encode_notification(
                "thread/changed", m.ThreadChanged(thread=thread, change="settled")
            )
            self.d.events.publish("thread/changed", frame, thread.id)
        for hook in self.after_settle:
            try:
                await hook(execution.id)
            except Exception:
                log.exception("after_settle_failed", execution=execution.id)
        return execution

    async def discover_native_sessions(self, execution_id: str | None = None) -> None:
        """Record where runs that announce their session late keep their transcript."""
        await discover_sessions(self.d.store, self.environ, self.agents, execution_id)

    async def on_exit(self, execution_id: str, report: ExitReport) -> None:
        """The supervisor saw a headless run end: settle it with what its exit says."""
        params = m.SettleParams(
            execution_id=execution_id,
            outcome=outcome_of(report.exit_code, ended_as=report.ended_as),
            exit_code=report.exit_code,
        )
        with contextlib.suppress(ExecutionSettled, HostLeaseLost):
            await self.settle(None, params, output_tail=report.output_tail or None)

    # wait / show

    async def wait(self, caller: Caller, params: m.WaitParams) -> m.Execution:
        execution = await self.show(caller, m.ExecutionRef(execution_id=params.execution_id))
        if execution.status == "settled":
            return execution
        event = self._settled.setdefault(params.execution_id, anyio.Event())
        with anyio.move_on_after(params.timeout if params.timeout is not None else float("inf")):
            await event.wait()
        return await self.show(caller, m.ExecutionRef(execution_id=params.execution_id))

    async def show(self, caller: Caller, params: m.ExecutionRef) -> m.Execution:
        record = await owned_execution(self.d.store, caller, params.execution_id)
        return execution_from_record(record, with_policy=True)

    async def reconcile_thread(self, caller: Caller, thread_id: str) -> list[str]:
        return await reconcile(self, thread_id)


__all__ = ["DEFAULT_AGENT", "Executions"]
