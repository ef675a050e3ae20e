"""A running alpd's parts: the store, the services wired to each other, and the state
that outlives single requests (tasks, connections, the web page once asked for).

`daemon.py` runs it; the doors (`rpc.handlers`, the web page) are given it. It imports no
door: the handlers are passed in, so nothing here depends on the methods they bind.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio
import structlog

from alpd.background.event_relay import EventRelay
from alpd.background.scheduler import Scheduler
from alpd.channels.manager import Channels
from alpd.clock import Clock
from alpd.config import load_config
from alpd.domain.config_fields import ConfigError
from alpd.domain.runs.agents import AgentsConfig
from alpd.errors import ConfigInvalid
from alpd.events import EventBus
from alpd.rpc.connection import ConnectionLimits, InFlight
from alpd.rpc.dispatch import Dispatcher, Handler, Session
from alpd.rpc.listener import connection_cap
from alpd.services.budgets.service import BudgetService
from alpd.services.bundles.service import BundleService
from alpd.services.checkpoints.retention import Retention
from alpd.services.checkpoints.service import CheckpointService
from alpd.services.context import Daemon
from alpd.services.conversation.delivery import DeliveryService
from alpd.services.conversation.handoffs import HandoffService
from alpd.services.conversation.inbox import Inbox
from alpd.services.conversation.reports import ReportService
from alpd.services.history.meaning import MeaningIndex
from alpd.services.history.sync import HistoryService
from alpd.services.hosts.service import HostService
from alpd.services.memory.proposals import Proposals
from alpd.services.memory.service import MemoryService
from alpd.services.recap.refresh import RecapService
from alpd.services.runs.dirs import Paths
from alpd.services.runs.executions import Executions
from alpd.services.runs.guards import enforce_limits
from alpd.services.runs.leases import Leases
from alpd.services.runs.reconcile import reconcile
from alpd.services.schedules.service import ScheduleService
from alpd.services.schedules.wakes import UsageLimitWakes
from alpd.services.threads.refs import resolve_params
from alpd.store.db import Store
from protocol import messages as m

if TYPE_CHECKING:
    from alpd.web.server import WebServer

#: the task group's long-running tasks, listed by `daemon/status` and `daemon/ps` from start
BACKGROUND_TASKS: Final = (
    "reconciler",
    "history-sync",
    "meaning-index",
    "delivery",
    "budgets",
    "scheduler",
    "checkpoints",
    "hosts",
)

log = structlog.get_logger("alpd")


@dataclass(slots=True)
class DaemonConfig:
    home: Path
    socket_path: Path
    config_path: Path
    drain_timeout: float = 10.0
    reconcile_interval: float = 2.0
    limits: ConnectionLimits = field(default_factory=ConnectionLimits)
    #: serve the web page from start (`alpd --web`), as `[web] enabled = true` does
    web: bool = False


class Runtime:
    """State of a running alpd that outlives single requests."""

    def __init__(
        self,
        config: DaemonConfig,
        store: Store,
        agents: AgentsConfig,
        handlers: Callable[[Runtime], dict[str, Handler]],
    ) -> None:
        self.config = config
        self.started = time.monotonic()
        self.daemon = Daemon(store=store, events=EventBus(), clock=Clock(), uid=os.getuid())
        self.executions = Executions(
            self.daemon, Paths(config.home, config.socket_path), agents, Leases()
        )
        self.in_flight = InFlight()
        self.connections: dict[int, int] = {}
        self.max_connections = connection_cap(resource.getrlimit(resource.RLIMIT_NOFILE)[0])
        self.tasks: dict[str, m.TaskState] = {}
        #: file checkpoints before and after every root (docs/checkpoints.md); the first
        #: after-settle hook, so the files are read before a delivery can wake the next root
        self.checkpoints = CheckpointService(
            self.daemon, config.home, lambda: self.executions.agents.checkpoints
        )
        self.executions.before_start.append(self.checkpoints.before_root)
        self.executions.after_settle.append(self.checkpoints.after_settle)
        self.retention = Retention(self.checkpoints)
        self.bundles = BundleService(self.daemon, config.home, self.executions.threads)
        self.history = HistoryService(self.executions)
        self.executions.after_settle.append(self.history.after_settle)
        #: the meaning index (docs/search.md), built by its background task
        self.meaning = MeaningIndex(self.daemon, lambda: self.executions.agents.search)
        self.delivery = DeliveryService(self.executions)
        self.executions.after_settle.append(self.delivery.after_settle)
        #: this daemon instance, as the holder of the handoff slots it reserves
        self.instance = self.daemon.clock.new_id("alpd_")
        self.handoffs = HandoffService(self.delivery, self.instance)
        self.memory = MemoryService(self.daemon)
        self.proposals = Proposals(self.daemon, self.memory)
        self.inbox = Inbox(self.delivery, self.proposals)
        self.reports = ReportService(self.history, self.delivery)
        self.executions.after_settle.append(self.reports.after_settle)
        #: budgets of threads and schedules (docs/budgets.md): held by their own loop
        self.budgets = BudgetService(self.executions)
        self.executions.after_settle.append(self.budgets.after_settle)
        self.recaps = RecapService(self.executions, self.history)
        self.executions.after_settle.append(self.recaps.after_settle)
        self.executions.after_step.append(self.recaps.after_step)
        self.schedules = ScheduleService(self.executions, wake=lambda: self.scheduler.poke())
        #: a root ended on its runtime's usage limit → a one-off wake at the reset
        self.executions.after_settle.append(UsageLimitWakes(self.schedules).after_settle)
        self.scheduler = Scheduler(self.schedules, self.delivery)
        #: this alpd's host and its lease (docs/many-machines.md): registered by `daemon.py`
        #: before the reconciler and the scheduler start
        self.hosts = HostService(
            self.executions,
            config.home,
            lambda: self.executions.agents.host,
            lambda: self.scheduler.poke(),
        )
        #: events across hosts (docs/many-machines.md): run by `daemon.py` on PostgreSQL only
        self.event_relay = EventRelay(self.executions, self.schedules, self.instance)
        self.dispatcher = Dispatcher(handlers(self), resolve=self._thread_named)
        #: the chat doors (alpd.channels): run by `daemon.py` when config.toml has them
        self.channels = Channels(
            self.daemon,
            self.dispatcher,
            lambda: self.executions.agents.channels,
            self.history.sync_execution,
        )
        self.executions.after_settle.append(self.channels.after_settle)
        self.delivery.on_round_failed.append(self.channels.round_failed)
        self.reports.on_report.append(self.channels.on_report)
        self.budgets.on_warning.append(self.channels.on_budget)
        #: set by `daemon/stop`: the daemon stops as on SIGTERM
        self.stop_requested = anyio.Event()
        self._web: WebServer | None = None
        self.task_group: anyio.abc.TaskGroup | None = None

    async def _thread_named(self, session: Session, params: Any) -> Any:
        return await resolve_params(self.daemon.store, session.caller, params)

    def web(self) -> WebServer:
        """The web page's server (made on first use: starlette, uvicorn and jinja2 are
        imported only by a daemon whose page is wanted)."""
        if self._web is None:
            from alpd.web.door import Door
            from alpd.web.server import WebServer

            self._web = WebServer(
                self.config.home,
                Door(self.dispatcher, self.daemon.owner),
                self.daemon.events,
                lambda: self.executions.agents.web,
            )
        self._web.task_group = self.task_group
        return self._web

    async def stop_web(self, timeout: float) -> None:
        if self._web is not None:
            await self._web.stop(timeout)

    async def reload_config(self) -> AgentsConfig:
        """Re-read config.toml for the runs started from now on (SIGHUP, `daemon/reload`);
        a broken file is CONFIG_INVALID and the previous config stays. Read in a worker
        thread: a file on a slow or hung filesystem must not hold the loop."""
        try:
            agents = await anyio.to_thread.run_sync(load_config, self.config.config_path)
        except ConfigError as exc:
            log.warning("config_invalid", path=exc.path, line=exc.line, error=exc.message)
            raise ConfigInvalid(
                f"{exc}; the daemon keeps its previous config", path=exc.path, line=exc.line
            ) from exc
        self.executions.agents = agents
        self.meaning.retry()
        log.info("config_reloaded", path=str(self.config.config_path), agents=sorted(agents.agents))
        return agents

    def task_states(self) -> list[m.TaskState]:
        """The background tasks, then alpd's own processes and servers: the transcript
        reader (a child process, started when an import or a sync needs it) and the web page."""
        reader = self.history.reader.pid
        web = self._web
        return [
            *self.tasks.values(),
            m.TaskState(
                name="transcript-reader",
                state="running" if reader is not None else "stopped",
                pid=reader,
                detail="reads transcripts for the history; started when needed",
            ),
            m.TaskState(
                name="web",
                state="serving" if web is not None and web.running else "off",
                detail=web.url if web is not None and web.running else "`alp web` starts it",
            ),
            *self.channels.task_states(),
        ]

    async def reconcile_forever(self, interval: float) -> None:
        """Settle runs whose process vanished, and adopt orphans after a restart."""
        while True:
            try:
                settled = await reconcile(self.executions, None)
                await enforce_limits(self.executions)
                await self.executions.discover_native_sessions()
                self.tasks["reconciler"] = m.TaskState(
                    name="reconciler",
                    state="idle",
                    last_run_at=self.daemon.clock.now_iso(),
                    detail=f"settled {len(settled)}" if settled else None,
                )
            except Exception:
                log.exception("reconcile_failed")
                self.tasks["reconciler"] = m.TaskState(name="reconciler", state="failing")
            await anyio.sleep(interval)

    @property
    def connection_count(self) -> int:
        return sum(self.connections.values())
