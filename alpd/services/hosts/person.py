"""The person this alpd's rows belong to, claimed at start before the first request
(docs/many-machines.md, "One person across hosts"; the rules: `alpd.domain.hosts.person`).

Sets `Daemon.person` and `Daemon.owner`, the number every caller's rows are kept under from
then on (`Caller.uid`). On one host, and for a person's first host, the number is their uid:
nothing changes for a SQLite home.
"""

from __future__ import annotations

import os
import pwd

import structlog

from alpd.domain.hosts.person import PersonSettings, owner_candidates, person_of
from alpd.errors import StorageFull
from alpd.services.context import Daemon
from alpd.store import persons as store
from alpd.store.db import Tx

__all__ = ["PersonsFull", "claim_person"]

log = structlog.get_logger("alpd.hosts")


class PersonsFull(Exception):
    """Every number this person could take is another person's (not expected to happen)."""


def _login(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


async def claim_person(d: Daemon, settings: PersonSettings) -> None:
    """Who this alpd's rows belong to, and their number: kept in the database, or claimed
    now. PersonNotRole when `[person] name` is not the database role."""
    login = _login(d.uid)

    async def unit(tx: Tx) -> tuple[str, int | None]:
        person = person_of(settings.name, await store.database_role(tx), login)
        number = await store.claim_person(tx, person, owner_candidates(d.uid), d.clock.now_iso())
        await store.ensure_person_rows(tx)
        return person, number

    try:
        person, number = await d.store.write(unit)
    except StorageFull:
        # alpd still starts and serves reads on a full disk, its rows kept under its uid.
        log.warning("person_claim_deferred", uid=d.uid, reason="STORAGE_FULL")
        return
    if number is None:
        raise PersonsFull(f"person {person!r}: no owner number left; ask on the issue tracker")
    d.person, d.owner = person, number
    log.info("person_claimed", person=person, owner=number, uid=d.uid, pid=os.getpid())
