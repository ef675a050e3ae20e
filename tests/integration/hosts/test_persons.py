"""One person, not one uid (issue 24, point 5; docs/many-machines.md, "One person across
hosts"), on a real PostgreSQL cluster (tests/postgres_cluster.py) with two login roles, alice
and bob, that are neither superusers nor BYPASSRLS:

- two real alpd on one database, alice's and bob's (both run as this test's uid): bob cannot
  list, show, search, continue or export alice's threads, and raw SQL as bob — a person's own
  `psql` — reads, changes and deletes none of alice's rows in any table, cannot write a row as
  alice, nor turn the binding off;
- alice on two hosts with different uids (her first host, uid 501, in this process through the
  services; then a real alpd under this test's uid) sees the same threads on both;
- `[person] name` naming another role than the one alpd connects as: alpd refuses to start.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import psycopg
import pytest
from person_roles import (
    person_config,
    refused,
    run_root,
    shared_database,
    start,
    thread_ids,
)
from polling import wait_for
from postgres_cluster import Cluster, as_role
from transcripts import Claude

from alpd.clock import Clock
from alpd.domain.hosts.person import SPARE_BASE, PersonSettings
from alpd.events import EventBus
from alpd.services.context import Caller, Daemon
from alpd.services.hosts.person import claim_person
from alpd.services.threads.lifecycle import ThreadService
from alpd.store.history.labels import recap_sql
from alpd.store.history.search import like_pattern
from alpd.store.postgres.dialect import translate
from alpd.store.postgres.persons import OWNER_COLUMN, SHARED_TABLES
from alpd.store.postgres.store import PostgresStore
from alpd.testing.daemon import DaemonProcess, daemon_env
from protocol import messages as m

pytestmark = pytest.mark.postgres


@pytest.fixture
def database(postgres_cluster: Cluster) -> Iterator[str]:
    yield from shared_database(postgres_cluster)


def import_zebras(d: DaemonProcess, base: Path) -> None:
    sessions = base / "claude"
    sessions.mkdir()
    claude = Claude()
    (sessions / f"{claude.session}.jsonl").write_bytes(
        claude.prompt("zebra crossing plans", ts="2026-11-01T10:00:00.000Z")
        + claude.reply("the zebra crossing is drawn", ts="2026-11-01T10:01:00.000Z")
    )
    d.call("history/import", {"runtime": "claude", "path": str(sessions)})


def zebra_hits(d: DaemonProcess) -> int:
    result = d.call("history/search", {"query": "zebra"})
    assert isinstance(result, dict)
    return len(result["hits"])


def test_another_persons_rows_are_unreachable(database: str, tmp_path: Path) -> None:
    with start(tmp_path / "alice", as_role(database, "alice"), "alice") as alice:
        mine = alice.call("thread/create", {"title": "Zebra crossing", "cwd": str(tmp_path)})
        assert isinstance(mine, dict)
        assert mine["ownerUid"] == os.getuid()  # her first host: her number is her uid
        assert run_root(alice, mine["id"], tmp_path)["outcome"] == "completed"
        import_zebras(alice, tmp_path / "alice")
        # her thread's title, and the prompt and reply she imported
        wait_for(lambda: zebra_hits(alice) == 3, what="alice's three zebras")
        with start(tmp_path / "bob", as_role(database, "bob")) as bob:
            # Bob runs under the same uid here; his number is not alice's.
            assert thread_ids(bob) == set()
            theirs = {"threadId": mine["id"]}
            assert refused(bob, "thread/show", theirs) == "THREAD_NOT_FOUND"
            assert refused(bob, "thread/show", {"threadId": "Zebra crossing"}) == (
                "THREAD_NOT_FOUND"
            )
            assert refused(bob, "thread/continue", {**theirs, "agent": "ok"}) == (
                "THREAD_NOT_FOUND"
            )
            assert refused(bob, "thread/export", theirs) == "THREAD_NOT_FOUND"
            assert zebra_hits(bob) == 0
            his = bob.call("thread/create", {"title": "Zebra of bob", "cwd": str(tmp_path)})
            assert isinstance(his, dict)
            assert his["ownerUid"] == SPARE_BASE
            assert run_root(bob, his["id"], tmp_path)["outcome"] == "completed"
            assert thread_ids(bob) == {his["id"]}
            assert thread_ids(alice) == {mine["id"]}
            wait_for(lambda: zebra_hits(bob) == 1, what="bob's own zebra")
            assert zebra_hits(alice) == 3
    raw_sql_as_bob_reaches_nothing_of_alice(database, mine["id"])


def raw_sql_as_bob_reaches_nothing_of_alice(database: str, thread_id: str) -> None:
    with psycopg.connect(database, autocommit=True) as admin:
        tables = [
            row[0]
            for row in admin.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() "
                "ORDER BY tablename"
            )
        ]
        owned = {
            table: admin.execute(
                f"SELECT count(*) FILTER (WHERE {OWNER_COLUMN} = 'alice'), "
                f"count(*) FILTER (WHERE {OWNER_COLUMN} = 'bob') FROM {table}"
            ).fetchone()
            for table in tables
            if table not in SHARED_TABLES
        }
    assert all(owned[t][0] > 0 for t in ("threads", "executions", "history_entries", "persons"))
    assert owned["hosts"] == (1, 1)
    with psycopg.connect(as_role(database, "bob"), autocommit=True) as bob:
        seen = {
            table: bob.execute(
                f"SELECT count(*), count(*) FILTER (WHERE {OWNER_COLUMN} != 'bob') FROM {table}"
            ).fetchone()
            for table in owned
        }
        assert seen == {table: (owned[table][1], 0) for table in owned}
        # the admin's match of words (migration 36) answers with bob's own rows only
        matching = "SELECT count(*) FROM alp_words_matching(to_tsquery('simple', 'zebra'))"
        assert bob.execute(matching).fetchone() == (1,)
        with psycopg.connect(as_role(database, "alice"), autocommit=True) as alice:
            assert alice.execute(matching).fetchone() == (3,)
        for statement in (
            f"UPDATE threads SET title = 'mine now' WHERE id = '{thread_id}'",
            f"DELETE FROM executions WHERE thread_id = '{thread_id}'",
            "DELETE FROM persons WHERE name = 'alice'",
            "UPDATE history_entries SET text = 'gone' WHERE owner_role = 'alice'",
        ):
            assert bob.execute(statement).rowcount == 0, statement
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            bob.execute(
                "INSERT INTO persons (name, uid, registered_at, owner_role) "
                "VALUES ('mallory', 7, 'now', 'alice')"
            )
        for statement in (
            "ALTER TABLE threads DISABLE ROW LEVEL SECURITY",
            "DROP POLICY alp_person ON threads",
            "UPDATE alp_schema SET version = 1",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                bob.execute(statement)
    with psycopg.connect(database, autocommit=True) as admin:
        row = admin.execute("SELECT title FROM threads WHERE id = %s", (thread_id,)).fetchone()
        assert row == ("Zebra crossing",)


def test_a_person_sees_the_same_threads_from_a_host_with_another_uid(
    database: str, tmp_path: Path
) -> None:
    url = as_role(database, "alice")

    async def first_host(threads: list[str]) -> tuple[str, set[str]]:
        """Alice's first host, where her uid is 501: her number becomes 501; a thread made
        there; then the threads that host lists (`threads`: made on the other host)."""
        store = await PostgresStore.connect(url)
        try:
            d = Daemon(store=store, events=EventBus(), clock=Clock(), uid=501)
            await claim_person(d, PersonSettings())
            assert (d.person, d.owner) == ("alice", 501)
            caller = Caller(uid=d.owner, gid=os.getgid(), pid=os.getpid())
            service = ThreadService(d)
            if not threads:
                made = await service.create(
                    caller, m.ThreadCreateParams(title="Laptop work", cwd=str(tmp_path))
                )
                return made.id, set()
            listed = await service.list(caller, m.ThreadListParams(all=True))
            return "", {t.id for t in listed.threads}
        finally:
            await store.close()

    laptop_thread, _ = anyio.run(first_host, [])
    with start(tmp_path / "desk", url) as desk:  # this test's uid, not 501
        assert thread_ids(desk) == {laptop_thread}
        shown = desk.call("thread/show", {"threadId": "Laptop work"})
        assert isinstance(shown, dict)
        assert shown["thread"]["ownerUid"] == 501
        assert run_root(desk, laptop_thread, tmp_path)["outcome"] == "completed"
        made = desk.call("thread/create", {"title": "Desk work", "cwd": str(tmp_path)})
        assert isinstance(made, dict)
        assert made["ownerUid"] == 501
        log = desk.log_text()
        assert f'"person": "alice", "owner": 501, "uid": {os.getuid()}' in log
    _, listed = anyio.run(first_host, [laptop_thread])
    assert listed == {laptop_thread, made["id"]}


def test_a_person_name_that_is_not_the_role_is_refused(database: str, tmp_path: Path) -> None:
    base = tmp_path / "bob"
    base.mkdir(mode=0o700)
    (base / "config.toml").write_text(person_config("carol"))
    home, socket_path = base / "home", Path(f"/tmp/alp-test-{os.getpid()}-carol/alpd.sock")
    env = daemon_env(home, socket_path, {"ALP_STORE_URL": as_role(database, "bob")})
    done = subprocess.run(
        [sys.executable, "-P", "-m", "alpd", "--config", str(base / "config.toml")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    assert "[person] name is 'carol' but alpd connects to the database as role 'bob'" in (
        done.stderr
    )


def test_a_recap_reads_a_threads_entries_through_their_index_as_a_person(database: str) -> None:
    """Under the policies a join condition calling a function that is not LEAKPROOF is never
    an index condition; the recap's statement joins the entries on a plain column, so a
    person's recap reads its thread's entries through `history_by_execution`, not the whole
    history once per root (EXPLAIN with scans that read everything priced out: the plan
    still reads every entry when the join calls json_extract)."""
    statement = translate(recap_sql(newest=True))
    with psycopg.connect(as_role(database, "alice"), autocommit=True) as alice:
        alice.execute("SET enable_seqscan = off")
        alice.execute("SET enable_bitmapscan = off")
        plan = "\n".join(
            row[0]
            for row in alice.execute(
                f"EXPLAIN {statement.sql}", {"p1": "thread_x", "p2": 0, "p3": 40}
            )
        )
    assert "history_by_execution on history_entries" in plan, plan
    assert "Index Cond: ((execution_id = " in plan, plan


def test_the_admins_cjk_match_answers_each_person_with_their_own_documents(
    database: str,
) -> None:
    """`alp_cjk_matching` (migration 37) matches with the admin's rights, through the
    trigram index, and filters the person itself: each person's call finds their own
    documents only, however many of another's match."""
    for first, (person, count) in ((10, ("alice", 3)), (20, ("bob", 1))):
        with psycopg.connect(as_role(database, person), autocommit=True) as conn:
            for n in range(count):
                conn.execute(
                    "INSERT INTO search_cjk (rowid, body) VALUES (%s, %s)",
                    (first + n, f"{person} 斑马线的计划 {n}"),
                )
    matching = "SELECT body FROM alp_cjk_matching(%s) ORDER BY body"
    for person, count in (("alice", 3), ("bob", 1)):
        with psycopg.connect(as_role(database, person), autocommit=True) as conn:
            found = [row[0] for row in conn.execute(matching, ("%斑马线%",))]
            assert found == [f"{person} 斑马线的计划 {n}" for n in range(count)]
            assert conn.execute(matching, ("%没有%",)).fetchall() == []
    # a pattern's escapes are the search's (`like_pattern`): `_` is itself, not any character
    with psycopg.connect(as_role(database, "alice"), autocommit=True) as conn:
        for rowid, body in ((1, "斑马_线"), (2, "斑马x线")):
            conn.execute("INSERT INTO search_cjk (rowid, body) VALUES (%s, %s)", (rowid, body))
        found = conn.execute(matching, (like_pattern("马_线"),)).fetchall()
        assert found == [("斑马_线",)]
