"""A schedule's fire is claimed by a row with a unique key (migration V32; docs/schedules.md,
docs/many-machines.md): on PostgreSQL, two hosts' transactions claiming one fire at the same
moment — each its own connection, WITHOUT the store's write lock — give one claim; the other
waits for the first's commit and finds the key taken. Older rows go as the next is claimed,
and with their schedule."""

from __future__ import annotations

from typing import Any

import anyio
import psycopg
import pytest
from postgres_cluster import Cluster

from alpd.store.postgres.connection import AsyncSqliteLike, SqliteLike, configure
from alpd.store.schedules import claim_fire, delete_schedule

pytestmark = pytest.mark.postgres


@pytest.fixture
def url(postgres_cluster: Cluster) -> Any:
    made = postgres_cluster.new_database()
    yield made
    postgres_cluster.drop_database(made)


def _connection(url: str) -> psycopg.Connection[Any]:
    conn = psycopg.connect(url, prepare_threshold=None)
    configure(conn)
    return conn


def test_two_transactions_claiming_one_fire_give_one_claim_without_any_lock(url: str) -> None:
    first, second = _connection(url), _connection(url)

    async def claim(conn: psycopg.Connection[Any], host: str, fire: str) -> bool:
        tx = AsyncSqliteLike(SqliteLike(conn))
        return await claim_fire(
            tx,  # type: ignore[arg-type]
            "sch_1",
            fire,
            host_id=host,
            accounted_until="2026-01-01T00:00:00.000Z",
            at="2026-01-01T00:00:01.000Z",
        )

    async def main() -> None:
        fire = "2026-01-01T00:00:01.000Z"
        assert await claim(first, "host_a", fire)  # A's transaction holds the new row
        second_claimed: list[bool] = []

        async def on_b() -> None:
            second_claimed.append(await claim(second, "host_b", fire))

        async with anyio.create_task_group() as tg:
            tg.start_soon(on_b)
            await anyio.sleep(0.5)
            assert second_claimed == []  # B waits on A's uncommitted row
            first.commit()
        assert second_claimed == [False]
        second.commit()
        # a fire A's transaction rolled back is B's to claim
        later = "2026-01-01T00:00:02.000Z"
        assert await claim(first, "host_a", later)
        first.rollback()
        assert await claim(second, "host_b", later)
        second.commit()

    try:
        anyio.run(main)
        rows = first.execute("SELECT fire_time, host_id FROM schedule_fires ORDER BY 1").fetchall()
        assert rows == [
            ("2026-01-01T00:00:01.000Z", "host_a"),
            ("2026-01-01T00:00:02.000Z", "host_b"),
        ]
        first.commit()
    finally:
        first.close()
        second.close()


def test_older_fire_rows_go_as_the_next_is_claimed_and_with_their_schedule(url: str) -> None:
    conn = _connection(url)

    async def main() -> None:
        tx: Any = AsyncSqliteLike(SqliteLike(conn))
        for second in range(1, 6):
            fire = f"2026-01-01T00:00:0{second}.000Z"
            accounted = f"2026-01-01T00:00:0{second - 1}.500Z"
            assert await claim_fire(
                tx, "sch_1", fire, host_id=None, accounted_until=accounted, at=fire
            )
            assert not await claim_fire(
                tx, "sch_1", fire, host_id=None, accounted_until=accounted, at=fire
            )
        assert await claim_fire(tx, "sch_2", "2026-01-01T00:00:01.000Z", host_id=None,
                                accounted_until="2026-01-01T00:00:00.000Z", at="x")  # fmt: skip
        kept = await tx.execute_fetchall("SELECT schedule_id, fire_time FROM schedule_fires")
        assert sorted(tuple(r) for r in kept) == [
            ("sch_1", "2026-01-01T00:00:05.000Z"),
            ("sch_2", "2026-01-01T00:00:01.000Z"),
        ]
        await delete_schedule(tx, "sch_1")
        kept = await tx.execute_fetchall("SELECT schedule_id FROM schedule_fires")
        assert [r[0] for r in kept] == ["sch_2"]

    try:
        anyio.run(main)
    finally:
        conn.rollback()
        conn.close()
