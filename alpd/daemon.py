"""The daemon: wires store, services and listener together and runs them in one task group.

Lifecycle: take the home lock → open the store (integrity check, migrations) → listen →
READY=1 → serve. On SIGTERM/SIGINT: STOPPING=1, stop accepting, let in-flight requests
finish (bounded by `drain_timeout`), close the store, return (exit 0).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import socket
import sys
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Final

import anyio
import structlog
from anyio import open_signal_receiver  # eager: see _until_stopped

from alpd import __version__
from alpd.assembly import BACKGROUND_TASKS, DaemonConfig, Runtime
from alpd.background.history_sync import run_history_sync
from alpd.background.meaning_index import run_meaning_index
from alpd.config import load_config
from alpd.domain.runs.agents import AgentsConfig
from alpd.errors import ConfigInvalid, WebUnavailable
from alpd.lock import HomeLock
from alpd.paths import ensure_private_dir
from alpd.rpc.connection import Connection
from alpd.rpc.handlers import build_handlers
from alpd.rpc.listener import accept_forever, bind_unix_socket, refuse
from alpd.rpc.lobby import Lobby
from alpd.sdnotify import Notifier
from alpd.services.context import Caller
from alpd.services.hosts.person import claim_person
from alpd.socket_activation import listen_fds
from alpd.store.db import Store, open_store, store_url
from alpd.supervisor import cgroups
from alpd.supervisor.supervisor import Supervisor
from protocol import errors, jsonrpc
from protocol import messages as m
from protocol.framing import Framing, encode_frame
from protocol.peercred import (
    PeerCredentials,
    PeerCredentialsUnavailable,
    read_peer_credentials,
)

if TYPE_CHECKING:
    pass

log = structlog.get_logger("alpd")


def admit_peer(runtime: Runtime, lobby: Lobby, peer: socket.socket) -> None:
    """Take one accepted socket into the lobby, or refuse it at once (foreign uid, over the
    cap). Synchronous and cheap: the accept loop takes a batch of these per turn."""
    try:
        creds = read_peer_credentials(peer)
    except PeerCredentialsUnavailable:
        refuse(peer, _refusal("PERMISSION_DENIED", "peer credentials unavailable"))
        return
    if creds.uid != runtime.daemon.uid:
        log.warning("peer_refused", peer_uid=creds.uid, peer_pid=creds.pid)
        refuse(peer, _refusal("PERMISSION_DENIED", f"uid {creds.uid} is not the owner"))
        return
    held = runtime.connections.get(creds.uid, 0)
    if held >= runtime.max_connections:
        log.warning("peer_refused", reason="TOO_MANY_CONNECTIONS", held=held)
        refuse(
            peer,
            _refusal(
                "TOO_MANY_CONNECTIONS",
                f"{held} connections of uid {creds.uid} are open (the limit); close some",
            ),
        )
        return
    runtime.connections[creds.uid] = held + 1
    lobby.admit(peer, creds)


def _release(runtime: Runtime, creds: PeerCredentials) -> None:
    runtime.connections[creds.uid] -= 1


async def serve_peer(
    runtime: Runtime,
    peer: socket.socket,
    preloaded: bytes,
    partial_since: float | None,
    creds: PeerCredentials,
) -> None:
    """Serve a connection that left the lobby with the start of a frame (`preloaded`)."""
    try:
        stream = await anyio.abc.UNIXSocketStream.from_socket(peer)
        # The peer's uid is alpd's (admit_peer); its rows are its person's (Daemon.owner).
        caller = Caller(uid=runtime.daemon.owner, gid=creds.gid, pid=creds.pid)
        connection = Connection(
            stream,
            caller,
            runtime.dispatcher,
            runtime.daemon.events,
            runtime.config.limits,
            runtime.in_flight,
        )
        connection.preload(preloaded, partial_since)
        await connection.serve()
    except Exception:
        # Whatever one connection did wrong ends that connection, never the task group
        # (and with it the daemon) that serves everybody else.
        log.exception("connection_failed", uid=creds.uid, pid=creds.pid)
        peer.close()
    finally:
        _release(runtime, creds)


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
        agents = await anyio.to_thread.run_sync(load_config, config.config_path)
        store = await open_store(config.home, store_url(os.environ, agents.store_url))
        try:
            await _serve(config, store, agents, notifier)
        finally:
            await store.close()
    finally:
        lock.release()
    log.info("stopped")


#: young objects between two collections of the youngest generation (CPython's default: 700)
GC_GEN0_THRESHOLD: Final = 20_000


def _settle_the_heap() -> None:
    """Move what start-up made (modules, the handlers, the store: ~150k objects) out of the
    collector's sight, and collect the youngest generation less often.

    A full collection walks every tracked object: with a thousand slow connections open next
    to the start-up heap it took 30-500 ms (measured with gc.callbacks on a loaded 2-vCPU
    machine), the pauses behind most of the owner's p99 under a slowloris crowd
    (bench/bench_slowloris.py). Frozen objects are never walked again; they are the ones
    that live as long as the daemon anyway."""
    gc.collect()
    gc.freeze()
    _, gen1, gen2 = gc.get_threshold()
    gc.set_threshold(GC_GEN0_THRESHOLD, gen1, gen2)


async def _serve(
    config: DaemonConfig, store: Store, agents: AgentsConfig, notifier: Notifier
) -> None:
    sock, owned = _open_listener(config)
    if not owned:
        # Socket-activated: the runs must learn the path systemd bound, not our default.
        config.socket_path = Path(sock.getsockname())
    runtime = Runtime(config, store, agents, build_handlers)
    # Before the first request: the person every caller's rows belong to, and the host
    # every root and schedule records it was made on.
    await claim_person(runtime.daemon, runtime.executions.agents.person)
    await runtime.hosts.register()
    _settle_the_heap()
    try:
        async with anyio.create_task_group() as tg:
            accept_scope = anyio.CancelScope()

            def start(
                peer: socket.socket, data: bytes, since: float | None, creds: PeerCredentials
            ) -> None:
                tg.start_soon(serve_peer, runtime, peer, data, since, creds)

            lobby = Lobby(config.limits, start, partial(_release, runtime))

            async def accept() -> None:
                with accept_scope:
                    await accept_forever(sock, partial(admit_peer, runtime, lobby))

            tg.start_soon(accept)
            tg.start_soon(lobby.sweep_forever)
            groups = cgroups.detect(config.home, os.getuid())
            cgroups.install(groups)
            runtime.executions.supervisor = Supervisor(
                tg, runtime.executions.on_exit, groups=groups
            )
            runtime.recaps.tg = tg
            runtime.executions.environ = runs_environment(os.environ)
            for name in BACKGROUND_TASKS:
                runtime.tasks[name] = m.TaskState(name=name, state="starting")
            runtime.tasks["hosts"] = runtime.hosts.state("idle")
            tg.start_soon(
                runtime.hosts.run, lambda state: runtime.tasks.__setitem__(state.name, state)
            )
            tg.start_soon(runtime.reconcile_forever, config.reconcile_interval)
            tg.start_soon(
                partial(
                    run_history_sync,
                    runtime.history,
                    lambda state: runtime.tasks.__setitem__(state.name, state),
                    runtime.daemon.clock.now_iso,
                    copied=partial(_copied, runtime),
                    hurry=lambda: runtime.budgets.holding,
                )
            )
            tg.start_soon(
                run_meaning_index,
                runtime.meaning,
                lambda state: runtime.tasks.__setitem__(state.name, state),
                runtime.daemon.clock.now_iso,
            )
            tg.start_soon(
                runtime.budgets.run, lambda state: runtime.tasks.__setitem__(state.name, state)
            )
            tg.start_soon(
                runtime.delivery.run, lambda state: runtime.tasks.__setitem__(state.name, state)
            )
            tg.start_soon(runtime.reports.backfill)
            tg.start_soon(
                runtime.retention.run, lambda state: runtime.tasks.__setitem__(state.name, state)
            )
            tg.start_soon(
                runtime.scheduler.run, lambda state: runtime.tasks.__setitem__(state.name, state)
            )
            tg.start_soon(runtime.channels.run)
            if store.dialect == "postgres":
                runtime.tasks["events"] = runtime.event_relay.state("starting")
                tg.start_soon(
                    runtime.event_relay.run,
                    lambda state: runtime.tasks.__setitem__(state.name, state),
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
                run_cgroups=str(groups.base) if groups else None,
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
        groups_in_use = cgroups.active()
        if groups_in_use is not None:
            groups_in_use.close()
            cgroups.install(None)
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
            # Imported with the module, not lazily by anyio at first use: by then a crowd of
            # connections may hold every descriptor (the accept loop takes a batch per turn),
            # and the import failing with EMFILE ended the daemon.
            with open_signal_receiver(signal.SIGTERM, signal.SIGINT, signal.SIGHUP) as sigs:
                async for signum in sigs:
                    log.info("signal", signal=signal.Signals(signum).name)
                    if signum != signal.SIGHUP:
                        break
                    with contextlib.suppress(ConfigInvalid):
                        await runtime.reload_config()
            waiting.cancel_scope.cancel()

        async def asked() -> None:
            await runtime.stop_requested.wait()
            log.info("stop_requested")
            waiting.cancel_scope.cancel()

        waiting.start_soon(signals)
        waiting.start_soon(asked)


def _copied(runtime: Runtime) -> None:
    """A history sync copied entries: the meaning index has work, and spend may have moved."""
    runtime.meaning.wakeup.set()
    runtime.budgets.spent.set()


async def _watchdog(notifier: Notifier, store: Store, interval: float) -> None:
    """WATCHDOG=1 only after proving the loop runs and the database writer answers."""
    while True:
        with anyio.move_on_after(interval):
            if await store.writer_alive():
                notifier.watchdog()
        await anyio.sleep(interval)


__all__ = ["DaemonConfig", "Runtime", "__version__", "run_daemon"]
