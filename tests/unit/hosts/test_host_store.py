"""The store's host statements on a real database: a lease renewed, a host claimed once of two
claims, its schedules moved in the same transaction, renewal refused once lost, and back."""

from __future__ import annotations

from pathlib import Path

import anyio

from alpd.store import hosts
from alpd.store.db import Store, Tx


def test_a_host_is_claimed_once_and_comes_back(tmp_path: Path) -> None:
    async def main() -> None:
        store = await Store.open(tmp_path / "alp.db")
        try:

            async def setup(tx: Tx) -> None:
                await hosts.insert_host(tx, "host_a", "a", "2026-01-01T00:00:00.000Z",
                                        "2026-01-01T00:00:30.000Z")  # fmt: skip
                await hosts.insert_host(tx, "host_b", "b", "2026-01-01T00:00:00.000Z",
                                        "2026-01-01T00:01:00.000Z")  # fmt: skip

            await store.write(setup)
            later = "2026-01-01T00:00:31.000Z"

            async def claim(me: str, at: str) -> bool:
                async def unit(tx: Tx) -> bool:
                    return await hosts.claim_host(tx, "host_a", me, at)

                return await store.write(unit)

            async def renew(at: str, until: str) -> bool:
                async def unit(tx: Tx) -> bool:
                    return await hosts.renew_lease(tx, "host_a", "a", at, until)

                return await store.write(unit)

            assert not await claim("host_b", "2026-01-01T00:00:29.000Z")  # lease lives
            assert not await claim("host_a", later)  # nobody claims itself
            assert await claim("host_b", later)
            assert not await claim("host_c", later)  # claimed once
            assert not await renew(later, "2026-01-01T00:01:01.000Z")  # lost: not renewed
            (a, b) = await hosts.hosts(store)
            assert (a.id, a.lost_to, a.back_at, b.lost_at) == ("host_a", "host_b", None, None)

            async def back(tx: Tx) -> bool:
                return await hosts.come_back(tx, "host_a", "a", later, "2026-01-01T00:02:00.000Z")

            assert await store.write(back)
            assert not await store.write(back)  # back once
            assert await renew(later, "2026-01-01T00:03:00.000Z")
            (a, _) = await hosts.hosts(store)
            assert a.lost_to == "host_b" and a.back_at is not None  # its loss stays on record
        finally:
            await store.close()

    anyio.run(main)
