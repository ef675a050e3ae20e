"""The PostgreSQL store beside SQLite's (docs/many-machines.md): the same schema, the same
refusals, and write units that never interleave, even from two hosts on one database."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from postgres_cluster import PERSON, Cluster, admin_url, as_role

from alpd.store.db import DatabaseTooNew, DatabaseUnavailable, Store, open_store
from alpd.store.migrations import LATEST_VERSION
from alpd.store.postgres.connection import UnitSuspended
from alpd.store.postgres.persons import (
    OWNER_COLUMN,
    POLICY,
    SHARED_TABLES,
    bind_tables,
    unbound_tables,
)
from alpd.store.postgres.store import IDLE_IN_WRITE_SECONDS, WRITE_LOCK, PostgresStore

pytestmark = pytest.mark.postgres


@pytest.fixture
def url(postgres_cluster: Cluster) -> Any:
    made = postgres_cluster.new_database()
    yield made
    postgres_cluster.drop_database(made)


def _sqlite_columns(path: Path) -> dict[str, set[str]]:
    with sqlite3.connect(path) as conn:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                "AND sql NOT LIKE 'CREATE VIRTUAL TABLE%' AND name NOT LIKE 'search_words_%' "
                "AND name NOT LIKE 'search_cjk_%' AND name NOT LIKE 'memory_fts_%'"
            )
        ]
        return {t: {row[1] for row in conn.execute(f"PRAGMA table_info({t})")} for t in tables}


def test_the_postgresql_schema_has_every_table_and_column_of_sqlites(
    url: str, tmp_path: Path
) -> None:
    async def make_sqlite() -> None:
        await (await Store.open(tmp_path / "alp.db")).close()

    anyio.run(make_sqlite)
    expected = _sqlite_columns(tmp_path / "alp.db")
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, column_name FROM information_schema.columns "
            "WHERE table_schema = 'public'"
        ).fetchall()
    found: dict[str, set[str]] = {}
    for table, column in rows:
        if column != OWNER_COLUMN:  # the person a row is bound to (the next test)
            found.setdefault(table, set()).add(column)
    assert {t: found.get(t) for t in expected} == expected


def test_every_postgresql_table_is_bound_to_its_persons(url: str) -> None:
    """Row-level security, forced, with the one policy, on every table but the shared ones;
    a table a later migration makes is bound too (docs/many-machines.md)."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT c.relname, c.relrowsecurity AND c.relforcerowsecurity, "
            "(SELECT array_agg(p.polname) FROM pg_policy p WHERE p.polrelid = c.oid), "
            "(SELECT count(*) FROM information_schema.columns i WHERE i.table_name = c.relname "
            f"AND i.column_name = '{OWNER_COLUMN}') "
            "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = 'public' AND c.relkind = 'r'"
        ).fetchall()
        assert len(rows) > 40
        unbound = [
            name
            for name, forced, policies, owner in rows
            if name not in SHARED_TABLES and (not forced or policies != [POLICY] or owner != 1)
        ]
        assert unbound == []
        assert [forced for name, forced, *_ in rows if name in SHARED_TABLES] == [False]
    with psycopg.connect(admin_url(url)) as conn:  # a later migration: the admin's
        conn.execute("CREATE TABLE later_table (id BIGINT PRIMARY KEY)")
        assert unbound_tables(conn) == ["later_table"]
        assert bind_tables(conn) == ["later_table"]
        assert unbound_tables(conn) == []


def test_the_tests_connect_as_a_person_the_policies_bind(url: str) -> None:
    """The role of every PostgreSQL store test (tests/postgres_cluster.py) is a person's:
    not a superuser, not BYPASSRLS, owner of no table — so every test runs under the
    policies, as alpd does on a shared database."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT current_user, rolsuper, rolbypassrls, "
            "(SELECT count(*) FROM pg_tables WHERE tableowner = current_user) "
            "FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
    assert row == (PERSON, False, False, 0)


def test_forced_row_level_security_binds_the_tables_owner_too(url: str) -> None:
    """A person whose role owns the tables (one person, the simple set-up of
    docs/many-machines.md) still sees only their own rows: the binding is FORCEd."""
    with psycopg.connect(admin_url(url), autocommit=True) as admin:
        admin.execute(
            "DO $$BEGIN CREATE ROLE owning_person LOGIN NOSUPERUSER NOBYPASSRLS; "
            "EXCEPTION WHEN duplicate_object THEN NULL; END$$"
        )
        admin.execute("ALTER TABLE threads OWNER TO owning_person")
        admin.execute(
            "INSERT INTO threads (id, owner_uid, workspace, status, revision, created_at, "
            f"updated_at, {OWNER_COLUMN}) VALUES ('theirs', 1, '/w', 'open', 1, 'a', 'a', "
            f"'{PERSON}')"
        )
    with psycopg.connect(as_role(url, "owning_person"), autocommit=True) as owner:
        owner.execute(
            "INSERT INTO threads (id, owner_uid, workspace, status, revision, created_at, "
            "updated_at) VALUES ('mine', 2, '/w', 'open', 1, 'a', 'a')"
        )
        assert owner.execute("SELECT id FROM threads").fetchall() == [("mine",)]
        assert owner.execute("DELETE FROM threads WHERE id = 'theirs'").rowcount == 0


def test_an_immutable_record_is_refused_as_on_sqlite(url: str) -> None:
    """`history_digests`' one row was written by the schema's migration: the admin's, which a
    person does not even see (they read NULL: every entry needs its digest, true on
    PostgreSQL, whose `since` is 1). The trigger is what refuses its owner."""
    with psycopg.connect(url) as person:
        assert person.execute("UPDATE history_digests SET since = 5").rowcount == 0

    async def main() -> None:
        store = await open_store(Path("/nonexistent"), admin_url(url))
        try:

            async def rewrite(tx: Any) -> None:
                await tx.execute("UPDATE history_digests SET since = 5")

            with pytest.raises(sqlite3.IntegrityError, match="history_digests is immutable"):
                await store.write(rewrite)
            row = await store.fetchone("SELECT since FROM history_digests")
            assert row is not None and row[0] == 1
        finally:
            await store.close()

    anyio.run(main)


def test_write_units_of_two_hosts_on_one_database_never_interleave(url: str) -> None:
    """Each unit reads a value, yields to the loop, and writes it plus one: 2 × 40 units on
    two stores (two hosts' alpd) lose no update, as the advisory write lock makes each unit
    run alone (alpd.store.postgres.store)."""

    async def main() -> None:
        first, second = await PostgresStore.connect(url), await PostgresStore.connect(url)
        try:

            async def create(tx: Any) -> None:
                await tx.execute(
                    "INSERT INTO threads (id, owner_uid, workspace, status, revision, "
                    "created_at, updated_at) VALUES ('t', 1, '/w', 'open', 1, 'a', 'a')"
                )

            await first.write(create)

            async def bump(tx: Any) -> None:
                async with tx.execute("SELECT revision FROM threads WHERE id = 't'") as cur:
                    row = await cur.fetchone()
                await anyio.sleep(0.001)
                await tx.execute("UPDATE threads SET revision = ? WHERE id = 't'", (row[0] + 1,))

            async with anyio.create_task_group() as tg:
                for _ in range(40):
                    tg.start_soon(first.write, bump)
                    tg.start_soon(second.write, bump)
            row = await second.fetchone("SELECT revision FROM threads WHERE id = 't'")
            assert row is not None and row[0] == 81
        finally:
            await first.close()
            await second.close()

    anyio.run(main)


def test_a_host_suspended_inside_a_write_stops_the_others_writes_only_for_a_while(
    url: str,
) -> None:
    """Host A's write unit takes the write lock and then waits on A (as an alpd stopped by
    SIGSTOP, or a closed laptop, mid-write): the server ends A's session after
    IDLE_IN_WRITE_SECONDS, so host B's write goes through then; A, resumed, finds its
    unit failed and nothing of it committed. Without the limit B's write waits as long as A
    sleeps."""

    async def main() -> None:
        first, second = await PostgresStore.connect(url), await PostgresStore.connect(url)
        held = anyio.Event()
        try:

            async def suspended(tx: Any) -> None:
                await tx.execute(_THREAD, ("held",))
                held.set()
                await anyio.sleep(IDLE_IN_WRITE_SECONDS + 3)
                await tx.execute(_THREAD, ("late",))

            async def other(tx: Any) -> None:
                await tx.execute(_THREAD, ("other",))

            failed: list[str] = []

            async def resumed() -> None:
                try:
                    await first.write(suspended)
                except sqlite3.DatabaseError as exc:
                    failed.append(str(exc))

            async with anyio.create_task_group() as tg:
                tg.start_soon(resumed)
                await held.wait()
                started = anyio.current_time()
                with anyio.fail_after(IDLE_IN_WRITE_SECONDS + 10):
                    await second.write(other)
                waited = anyio.current_time() - started
            assert waited >= IDLE_IN_WRITE_SECONDS - 1
            assert len(failed) == 1 and "idle-in-transaction" in failed[0]
            rows = await second.fetchall("SELECT id FROM threads ORDER BY id")
            assert [row[0] for row in rows] == ["other"]
        finally:
            await first.close()
            await second.close()

    anyio.run(main)


_THREAD = (
    "INSERT INTO threads (id, owner_uid, workspace, status, revision, created_at, updated_at) "
    "VALUES (?, 1, '/w', 'open', 1, 'a', 'a')"
)


def test_a_read_unit_takes_no_write_lock_and_sees_one_snapshot(url: str) -> None:
    """`read_unit` (thread/show's chain, a recap) runs while another host holds the write lock
    in a transaction that has made a thread, and sees neither that thread nor one committed
    by a third connection between its two statements."""

    async def main() -> None:
        store = await PostgresStore.connect(url)
        try:
            with psycopg.connect(url) as other, psycopg.connect(url, autocommit=True) as third:
                other.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                other.execute(_THREAD.replace("?", "'held'"))

                async def unit(tx: Any) -> tuple[int, int]:
                    rows = await tx.execute_fetchall("SELECT count(*) FROM threads")
                    third.execute(_THREAD.replace("?", "'between'"))
                    async with tx.execute("SELECT count(*) FROM threads") as cur:
                        again = await cur.fetchone()
                    return rows[0][0], again[0]

                with anyio.fail_after(5):
                    assert await store.read_unit(unit) == (0, 0)
                other.rollback()
            row = await store.fetchone("SELECT count(*) FROM threads")
            assert row is not None and row[0] == 1
        finally:
            await store.close()

    anyio.run(main)


def test_a_read_unit_that_awaits_anything_but_its_statements_is_refused(url: str) -> None:
    """A bare suspension is UnitSuspended (one that needs the event loop already fails on the
    worker thread, having none), and the store goes on."""

    async def main() -> None:
        store = await PostgresStore.connect(url)
        try:

            async def unit(tx: Any) -> None:
                await tx.execute_fetchall("SELECT 1")
                await asyncio.sleep(0)

            with pytest.raises(UnitSuspended):
                await store.read_unit(unit)
            assert await store.fetchone("SELECT 2") == (2,)
        finally:
            await store.close()

    anyio.run(main)


def test_reads_give_their_connections_back(url: str) -> None:
    """A read's ROLLBACK is sent after its result is handed back, a failed read's before its
    error: 3 × 40 reads, many more than the pool holds, then a write, each within a second
    (a connection kept would leave the pool empty: DatabaseUnavailable after 10 s)."""

    async def main() -> None:
        store = await PostgresStore.connect(url)
        try:
            for n in range(40):
                with anyio.fail_after(1):
                    assert await store.read(lambda conn: conn.execute("SELECT 1").fetchall())
                    assert await store.fetchall("SELECT ? AS n", (n,)) == [(n,)]
                    with pytest.raises(sqlite3.DatabaseError, match="no_such_table"):
                        await store.read(lambda conn: conn.execute("SELECT * FROM no_such_table"))

            async def create(tx: Any) -> None:
                await tx.execute(_THREAD, ("t",))

            with anyio.fail_after(1):
                await store.write(create)
            assert await store.fetchone("SELECT id FROM threads") == ("t",)
        finally:
            await store.close()

    anyio.run(main)


def test_a_database_of_a_newer_alp_is_refused(url: str) -> None:
    with psycopg.connect(admin_url(url)) as conn:
        conn.execute("UPDATE alp_schema SET version = %s", (LATEST_VERSION + 1,))

    async def main() -> None:
        with pytest.raises(DatabaseTooNew, match="upgrade alp"):
            await PostgresStore.connect(url)

    anyio.run(main)


def test_an_unreachable_database_is_unavailable_and_its_password_never_shown(
    postgres_cluster: Cluster,
) -> None:
    url = f"postgresql://alp:hunter2@/nowhere?host={postgres_cluster.socket_dir}/missing"

    async def main() -> None:
        with pytest.raises(DatabaseUnavailable) as info:
            await PostgresStore.connect(url)
        assert "hunter2" not in str(info.value)
        assert "[store] url" in str(info.value)

    anyio.run(main)
