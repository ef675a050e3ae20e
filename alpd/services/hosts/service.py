"""This alpd's host: register it, renew its lease on a timer, and take over the hosts whose
lease expired (docs/many-machines.md, "Hosts and leases").

A host that finds its own lease lost (another host took it over while it was stopped, cut
off or down) says so — HOST_LEASE_LOST in its log and in `alp ps` — takes nothing back, and
comes back with a fresh lease: what it ran before the loss is the taker's to settle
`interrupted` (`alpd.domain.hosts.lease.right_over`), its schedules stay with the taker, and
what it runs from now on is its own.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Final

import anyio
import structlog

from alpd.clock import iso
from alpd.domain.hosts.lease import (
    HostSettings,
    HostState,
    is_lost,
    lease_until,
    may_take_over,
    renew_every,
)
from alpd.errors import HostLeaseLost, StorageFull
from alpd.files import write_private_file
from alpd.services.runs.executions import Executions
from alpd.services.runs.reconcile import reconcile
from alpd.store import hosts as store
from alpd.store.db import Tx
from protocol import messages as m

__all__ = ["HOST_ID_FILE", "HostService"]

#: the file in the home that keeps this host's id across restarts
HOST_ID_FILE: Final = "host-id"

log = structlog.get_logger("alpd.hosts")


class HostService:
    def __init__(
        self,
        executions: Executions,
        home: Path,
        settings: Callable[[], HostSettings],
        on_takeover: Callable[[], None],
    ) -> None:
        self.executions = executions
        self.d = executions.d
        self.home = home
        self.settings = settings
        self.on_takeover = on_takeover
        #: the last loss of this host's lease noticed (its row then), for `alp ps`
        self.lost: HostState | None = None
        #: hosts this one took over since it started
        self.taken: list[str] = []

    def _identity(self) -> tuple[str, str]:
        path = self.home / HOST_ID_FILE
        try:
            host_id = path.read_text().strip()
        except FileNotFoundError:
            host_id = ""
        if not host_id:
            host_id = self.d.clock.new_id("host_")
            write_private_file(path, host_id + "\n")
        return host_id, self.settings().name or socket.gethostname()

    async def register(self) -> None:
        """Register this host (a new row, a renewal, or back after a loss) before the
        reconciler and the scheduler start."""
        host_id, name = await anyio.to_thread.run_sync(self._identity)
        now = self.d.clock.now()
        at, until = iso(now), iso(lease_until(now, self.settings().lease_seconds))

        async def unit(tx: Tx) -> HostState | None:
            existing = await store.host_in(tx, host_id)
            if existing is None:
                await store.insert_host(tx, host_id, name, at, until)
            elif is_lost(existing):
                await store.come_back(tx, host_id, name, at, until)
                return existing
            else:
                await store.renew_lease(tx, host_id, name, at, until)
            await store.adopt_unowned(tx, host_id, name)
            return None

        self.d.host_id, self.d.host_name = host_id, name
        try:
            loss = await self.d.store.write(unit)
        except StorageFull:
            # alpd still starts and serves reads on a full disk; the first renewal that has
            # room writes the row (`renew` inserts a host it does not find).
            log.warning("host_registration_deferred", host=host_id, reason="STORAGE_FULL")
            return
        log.info("host_registered", host=host_id, name=name, lease_until=until)
        if loss is not None:
            self._say_lost(loss)

    async def renew(self) -> bool:
        """Renew the lease; False (after saying so, and coming back) when it was lost."""
        host_id, name = self.d.host_id, self.d.host_name
        assert host_id is not None and name is not None
        now = self.d.clock.now()
        at, until = iso(now), iso(lease_until(now, self.settings().lease_seconds))

        async def unit(tx: Tx) -> HostState | None:
            if await store.renew_lease(tx, host_id, name, at, until):
                return None
            loss = await store.host_in(tx, host_id)
            if loss is None:
                await store.insert_host(tx, host_id, name, at, until)
            else:
                await store.come_back(tx, host_id, name, at, until)
            return loss

        loss = await self.d.store.write(unit)
        if loss is not None:
            self._say_lost(loss)
        return loss is None

    def _say_lost(self, loss: HostState) -> None:
        self.lost = loss
        error = HostLeaseLost(
            f"this host's lease ({loss.name}, {loss.id}) expired and host {loss.lost_to} took "
            f"it over at {loss.lost_at.isoformat() if loss.lost_at else '?'}: the roots it ran "
            "then are settled interrupted there and its schedules fire there now. This host "
            "goes on with a fresh lease; continue those threads to run them again "
            "(docs/many-machines.md)"
        )
        log.error("host_lease_lost", error=error.name, message=error.message)

    async def take_over(self) -> list[str]:
        """Claim every other host whose lease expired; the ids claimed."""
        me = self.d.host_id
        assert me is not None
        now = self.d.clock.now()
        claimed: list[str] = []
        for host in await store.hosts(self.d.store):
            if not may_take_over(me, host, now):
                continue

            async def unit(tx: Tx, host_id: str = host.id) -> bool:
                return await store.claim_host(tx, host_id, me, iso(now))

            if await self.d.store.write(unit):
                log.warning(
                    "host_taken_over",
                    host=host.id,
                    name=host.name,
                    lease_until=iso(host.lease_until),
                )
                claimed.append(host.id)
        if claimed:
            self.taken.extend(claimed)
            del self.taken[:-16]
            self.on_takeover()
            await reconcile(self.executions, None)
        return claimed

    async def run(self, report: Callable[[m.TaskState], None]) -> None:
        """Renew and look at the other hosts every third of the lease."""
        while True:
            await anyio.sleep(renew_every(self.settings().lease_seconds))
            try:
                await self.renew()
                await self.take_over()
                report(self.state("idle"))
            except Exception:
                log.exception("host_lease_failed")
                report(self.state("failing"))

    def state(self, state: str) -> m.TaskState:
        detail = f"host {self.d.host_name} ({self.d.host_id})"
        if self.lost is not None:
            detail += (
                f"; HOST_LEASE_LOST: taken over by {self.lost.lost_to} at "
                f"{iso(self.lost.lost_at) if self.lost.lost_at else '?'}, back with a fresh lease"
            )
        if self.taken:
            detail += f"; took over {', '.join(self.taken)}"
        return m.TaskState(
            name="hosts", state=state, last_run_at=self.d.clock.now_iso(), detail=detail
        )
