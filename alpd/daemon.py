"""The daemon: wires store, services and listener together and runs them in one task group.

Lifecycle: take the home lock → open the store (integrity check, migrations) → listen →
READY=1 → serve. On SIGTERM/SIGINT: STOPPING=1, stop accepting, let in-flight requests
finish (bounded by `drain_timeout`), close the store, return (exit 0).
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio
import structlog

from alpd import __version__
from alpd.background.history_sync import run_history_sync
from alpd.background.scheduler import Scheduler
from alpd.clock import Clock
from alpd.config import load_config
from alpd.domain.runs.agents import AgentsConfig, ConfigError
from alpd.errors import ConfigInvalid, WebUnavailable
from alpd.events import EventBus
from alpd.lock import HomeLock
from alpd.paths import ensure_private_dir
from alpd.rpc.connection import Connection, ConnectionLimits, InFlight
from alpd.rpc.dispatch import Dispatcher
from alpd.rpc.handlers import build_handlers
from alpd.rpc.listener import accept_forever, bind_unix_socket, connection_cap, refuse
from alpd.sdnotify import Notifier
from alpd.services.context import Caller, Daemon
from alpd.services.conversation.delivery import DeliveryService
from alpd.services.conversation.handoffs import HandoffService
from alpd.services.conversation.inbox import Inbox
from alpd.services.conversation.reports import ReportService
from alpd.services.history.sync import HistoryService
from alpd.services.recap.refresh import RecapService
from alpd.services.runs.dirs import Paths
from alpd.services.runs.executions import Executions
from alpd.services.runs.leases import Leases
from alpd.services.runs.reconcile import reconcile
from alpd.services.schedules.service import ScheduleService
from alpd.socket_activation import listen_fds
from alpd.store.db import Store
from alpd.supervisor.supervisor import Supervisor
from protocol import errors, jsonrpc
from protocol import messages as m
from protocol.framing import Framing, encode_frame
from protocol.peercred import PeerCredentialsUnavailable, read_peer_credentials

if TYPE_CHECKING:
    from alpd.web.server import WebServer

#: the task group's long-running tasks, listed by `daemon/status` and `daemon/ps` from start
BACKGROUND_TASKS: Final = ("reconciler", "history-sync", "delivery", "scheduler")

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

    def __init__(self, config: DaemonConfig, store: Store, agents: AgentsConfig) -> None:
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
        self.history = HistoryService(self.executions)
        self.executions.after_settle.append(self.history.after_settle)
        self.delivery = DeliveryService(self.executions)
        self.executions.after_settle.append(self.delivery.after_settle)
        #: this daemon instance, as the holder of the handoff slots it reserves
        self.instance = self.daemon.clock.new_id("alpd_")
        self.handoffs = HandoffService(self.delivery, self.instance)
        self.inbox = Inbox(self.delivery)
        self.reports = ReportService(self.history, self.delivery)
        self.executions.after_settle.append(self.reports.after_settle)
        self.recaps = RecapService(self.executions, self.history)
        self.executions.after_settle.append(self.recaps.after_settle)
        self.executions.after_step.append(self.recaps.after_step)
        self.schedules = ScheduleService(self.executions, wake=lambda: self.scheduler.poke())
        self.scheduler = Scheduler(self.schedules, self.delivery)
        self.dispatcher = Dispatcher(build_handlers(self))
        #: set by `daemon/stop`: the daemon stops as on SIGTERM
        self.stop_requested = anyio.Event()
        self._web: WebServer | None = None
        self.task_group: anyio.abc.TaskGroup | None = None

    def web(self) -> WebServer:
        """The web page's server (made on first use: starlette, uvicorn and jinja2 are
        imported only by a daemon whose page is wanted)."""
        if self._web is None:
            from alpd.web.door import Door
            from alpd.web.server import WebServer

            self._web = WebServer(
                self.config.home,
                Door(self.dispatcher, self.daemon.uid),
                self.daemon.events,
                lambda: self.executions.agents.web,
            )
        self._web.task_group = self.task_group
        return self._web

    async def stop_web(self, timeout: float) -> None:
        if self._web is not None:
            await self._web.stop(timeout)

    def reload_config(self) -> AgentsConfig:
        """Re-read config.toml for the runs started from now on (SIGHUP, `daemon/reload`);
        a broken file is CONFIG_INVALID and the previous config stays."""
        try:
            agents = load_config(self.config.config_path)
        except ConfigError as exc:
            log.warning("config_invalid", path=exc.path, line=exc.line, error=exc.message)
            raise ConfigInvalid(
                f"{exc}; the daemon keeps its previous config", path=exc.path, line=exc.line
            ) from exc
        self.executions.agents = agents
        log.info("config_reloaded", path=str(self.config.config_path), agents=sorted(agents.agents))
        return agents

    def task_states(self) -> list[m.TaskState]:
        return list(self.tasks.values())

    async def reconcile_forever(self, interval: float) -> None:
        """Settle runs whose process vanished, and adopt orphans after a restart."""
        while True:
            try:
                settled = await reconcile(self.executions, None)
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

    async def serve_peer(self, peer: socket.socket) -> None:
        """Serve one accepted socket, or refuse it at once (foreign uid, over the cap)."""
        try:
            creds = read_peer_credentials(peer)
        except PeerCredentialsUnavailable:
            refuse(peer, _refusal("PERMISSION_DENIED", "peer credentials unavailable"))
            return
        if creds.uid != self.daemon.uid:
            log.warning("peer_refused", peer_uid=creds.uid, peer_pid=creds.pid)
            refuse(peer, _refusal("PERMISSION_DENIED", f"uid {creds.uid} is not the owner"))
            return
        held = self.connections.get(creds.uid, 0)
        if held >= self.max_connections:
            log.warning("peer_refused", reason="TOO_MANY_CONNECTIONS", held=held)
            refuse(
                peer,
                _refusal(
                    "TOO_MANY_CONNECTIONS",
                    f"{held} connections of uid {creds.uid} are open (the limit); close some",
                ),
            )
            return
        self.connections[creds.uid] = held + 1
        try:
            stream = await anyio.abc.UNIXSocketStream.from_socket(peer)
            caller = Caller(uid=creds.uid, gid=creds.gid, pid=creds.pid)
            connection = Connection(
                stream,
                caller,
                self.dispatcher,
                self.daemon.events,
                self.config.limits,
                self.in_flight,
            )
            await connection.serve()
        except Exception:
            # Whatever one connection did wrong ends that connection, never the task group
            # (and with it the daemon) that serves everybody else.
            log.exception("connection_failed", uid=creds.uid, pid=creds.pid)
            peer.close()
        finally:
            self.connections[creds.uid] -= 1


def runs_environment(environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """What headless runs inherit: our environment, with `alp` itself on PATH so a run can
    pin and delegate even when alp lives in a virtualenv that is not on the user's PATH."""
    env = dict(environ)
    bin_dir = os.path.dirname(sys.executable)
    path = env.get("PATH", os.defpath)
    if bin_dir not in path.split(os.pathsep):
        env["PATH"] = bin_dir + os.pathsep + path
    return env


def _refusal(name: str, message: str) -> bytes:
    payload = jsonrpc.encode_error(None, errors.code_of(name), message, {"name": name})
    return encode_frame(Framing.NDJSON, payload)


def _open_listener(config: DaemonConfig) -> tuple[socket.socket, bool]:
    """The listening socket, and whether we bound it (and so must remove it at exit)."""
    inherited = listen_fds(os.environ)
    if inherited:
        for extra in inherited[1:]:
            extra.close()
        inherited[0].setblocking(False)
        return inherited[0], False
    return bind_unix_socket(config.socket_path), True


async def run_daemon(config: DaemonConfig, *, notifier: Notifier | None = None) -> None:
    notifier = notifier or Notifier.from_environ(os.environ)
    ensure_private_dir(config.home)
    lock = HomeLock(config.home / "alpd.lock")
    lock.acquire()
    try:
        agents = load_config(config.config_path)
        store = await Store.open(config.home / "alp.db")
        try:
            await _serve(config, store, agents, notifier)
        finally:
            await store.close()
    finally:
        lock.release()
    log.info("stopped")


async def _serve(
    config: DaemonConfig, store: Store, agents: AgentsConfig, notifier: Notifier
) -> None:
    sock, owned = _open_listener(config)
    if not owned:
        # Socket-activated: the runs must learn the path systemd bound, not our default.
        config.socket_path = Path(sock.getsockname())
    runtime = Runtime(config, store, agents)
    try:
        async with anyio.create_task_group() as tg:
            accept_scope = anyio.CancelScope()

            async def accept() -> None:
                with accept_scope:
                    await accept_forever(sock, runtime.serve_peer, tg)

            tg.start_soon(accept)
            runtime.executions.supervisor = Supervisor(tg, runtime.executions.on_exit)
            runtime.recaps.tg = tg
            runtime.executions.environ = runs_environment(os.environ)
            for name in BACKGROUND_TASKS:
                runtime.tasks[name] = m.TaskState(name=name, state="starting")
            tg.start_soon(runtime.reconcile_forever, config.reconcile_interval)
            tg.start_soon(
                run_history_sync,
                runtime.history,
                lambda state: runtime.tasks.__setitem__(state.name, state),
                runtime.daemon.clock.now_iso,
            )
            tg.start_soon(
                runtime.delivery.run, lambda state: runtime.tasks.__setitem__(state.name, state)
            )
            tg.start_soon(runtime.reports.backfill)
            tg.start_soon(
                runtime.scheduler.run, lambda state: runtime.tasks.__setitem__(state.name, state)
            )
            if notifier.watchdog_interval is not None:
                tg.start_soon(_watchdog, notifier, store, notifier.watchdog_interval)
            runtime.task_group = tg
            if config.web or agents.web.enabled:
                _start_web(runtime)
            log.info(
                "ready",
                socket=str(config.socket_path),
                home=str(config.home),
                pid=os.getpid(),
                max_connections=runtime.max_connections,
            )
            notifier.ready()
            await _until_stopped(runtime)
            notifier.stopping()
            log.info("stopping", in_flight=runtime.in_flight.count)
            accept_scope.cancel()
            await runtime.stop_web(config.drain_timeout)
            with anyio.move_on_after(config.drain_timeout):
                while runtime.in_flight.count:
                    await anyio.sleep(0.01)
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(runtime.history.reader.close)
        sock.close()
        if owned:
            with contextlib.suppress(FileNotFoundError):
                config.socket_path.unlink()


def _start_web(runtime: Runtime) -> None:
    """The page from start; a port it cannot have is logged, and the socket serves on."""
    try:
        runtime.web().start()
    except WebUnavailable as exc:
        log.warning("web_unavailable", error=exc.message)


async def _until_stopped(runtime: Runtime) -> None:
    """Until SIGTERM, SIGINT or `daemon/stop`; SIGHUP re-reads the config meanwhile."""
    async with anyio.create_task_group() as waiting:

        async def signals() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as sigs:
                async for signum in sigs:
                    log.info("signal", signal=signal.Signals(signum).name)
                    if signum != signal.SIGHUP:
                        break
                    with contextlib.suppress(ConfigInvalid):
                        runtime.reload_config()
            waiting.cancel_scope.cancel()

        async def asked() -> None:
            await runtime.stop_requested.wait()
            log.info("stop_requested")
            waiting.cancel_scope.cancel()

        waiting.start_soon(signals)
        waiting.start_soon(asked)


async def _watchdog(notifier: Notifier, store: Store, interval: float) -> None:
    """WATCHDOG=1 only after proving the loop runs and the database writer answers."""
    while True:
        with anyio.move_on_after(interval):
            if await store.writer_alive():
                notifier.watchdog()
        await anyio.sleep(interval)


__all__ = ["DaemonConfig", "Runtime", "__version__", "run_daemon"]
