"""A full disk under the PostgreSQL server's data, as alp meets it: the server refuses a write
that needs a file of the database extended (SQLSTATE 53100, disk full). alpd must say
STORAGE_FULL with what to do, lose nothing it acknowledged, go on serving reads (and keep its
host's lease), and write again once space returns — restarted too.

The database lives in a tablespace on a small tmpfs mounted for the test (root only; CI runs
as root, and under CI=true a skip is a failure), owned by the user the test cluster runs as;
a filler file takes every free byte of it. The server's own files (its WAL, the catalogs)
stay on the cluster's disk: a full WAL disk stops the server itself (PANIC), which no client
can answer but by waiting for it (docs/many-machines.md).
"""

from __future__ import annotations

import os
import random
import string
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from full_disk import fill, small_filesystem
from polling import wait_for
from postgres_cluster import ADMIN, TEMPLATE, Cluster
from store_access import raw_db

from alpctl.client import Client, RpcError
from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = [pytest.mark.chaos, pytest.mark.postgres, pytest.mark.needs_root]

#: the tablespace's filesystem: the template's copy (~10 MB) and room for some threads
TABLESPACE_SIZE = "32m"
#: creates tried after the fill at most; the first few may still fit in pages with room
TRIES = 200
#: refusals in a row after which the disk counts as full for alp
REFUSED_IN_A_ROW = 5

LEASE_SECONDS = 3
CONFIG = f'[host]\nname = "full"\nlease = "{LEASE_SECONDS}s"\n'


@pytest.fixture
def tiny_database(postgres_cluster: Cluster) -> Iterator[tuple[str, Path]]:
    """A database of alp's schema whose every file is on a small tmpfs; its URL and the
    tmpfs."""
    with small_filesystem(TABLESPACE_SIZE, owner=postgres_cluster.owner) as disk:
        space = disk / "space"
        space.mkdir(mode=0o700)
        if postgres_cluster.owner is not None:
            os.chown(space, disk.stat().st_uid, disk.stat().st_gid)
        name = f"alp_full_{os.getpid()}"
        admin_url = postgres_cluster.url("postgres", ADMIN)
        with psycopg.connect(admin_url, autocommit=True) as admin:
            admin.execute(f"CREATE TABLESPACE {name} LOCATION '{space}'")
            admin.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE} TABLESPACE {name}")
        try:
            yield postgres_cluster.url(name), disk
        finally:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
                admin.execute(f"DROP TABLESPACE IF EXISTS {name}")


def create(client: Client, title: str) -> tuple[str, str]:
    """("created", title), or the name and message of the error the daemon answered."""
    try:
        client.call("thread/create", {"title": title, "cwd": "/tmp"})
    except RpcError as exc:
        return exc.name, str(exc)
    return "created", title


def titles(client: Client) -> list[str]:
    result: Any = client.call("thread/list", {"all": True})
    return sorted(t["title"] for t in result["threads"])


def big_title(rng: random.Random, n: int) -> str:
    """A title of 1000 letters (near the longest allowed) that do not compress."""
    return f"refused? {n} " + "".join(rng.choices(string.ascii_letters, k=1000))


def until_refused(client: Client, rng: random.Random) -> tuple[list[str], list[str]]:
    """Creates on the full disk until REFUSED_IN_A_ROW are refused in a row: the titles
    acknowledged, and the messages of the refusals."""
    acknowledged, refusals, in_a_row = [], [], 0
    for n in range(TRIES):
        name, said = create(client, big_title(rng, n))
        assert name in ("created", "STORAGE_FULL"), (name, said)
        if name == "created":
            acknowledged.append(said)
            in_a_row = 0
            continue
        refusals.append(said)
        in_a_row += 1
        if in_a_row == REFUSED_IN_A_ROW:
            return acknowledged, refusals
    raise AssertionError(f"{TRIES} creates on a full tablespace and not refused in a row")


def start(tmp_path: Path, url: str) -> Any:
    (tmp_path / "config.toml").write_text(CONFIG)
    return running_daemon(
        tmp_path,
        extra_env={"ALP_STORE_URL": url},
        extra_args=["--config", str(tmp_path / "config.toml")],
    )


def stale_documents(d: DaemonProcess) -> int:
    """Threads whose search document is missing or older than the thread."""
    with raw_db(d) as db:
        return int(
            db.execute(
                "SELECT count(*) FROM threads t LEFT JOIN thread_docs d ON d.thread_id = t.id "
                "WHERE d.source IS NOT t.updated_at"
            ).fetchone()[0]
        )


def lease_kept(d: DaemonProcess) -> bool:
    status: Any = d.call("daemon/status")
    hosts = next(t for t in status["tasks"] if t["name"] == "hosts")
    return "HOST_LEASE_LOST" not in f"{hosts['state']} {hosts.get('detail')}"


def test_a_full_tablespace_says_storage_full_loses_nothing_and_writes_resume(
    tmp_path: Path, tiny_database: tuple[str, Path]
) -> None:
    url, disk = tiny_database
    rng = random.Random(20261202)
    with start(tmp_path, url) as d:
        with d.client() as conn:
            kept = [f"before {i:02}" for i in range(20)]
            for title in kept:
                assert create(conn, title) == ("created", title)
            filler = fill(disk)
            acknowledged, refusals = until_refused(conn, rng)
            kept += acknowledged
            assert all("no space left" in said and "free space" in said for said in refusals)
            # reads go on, and what was acknowledged is there; the lease (renewed every
            # second) outlives the full disk
            assert titles(conn) == sorted(kept)
            time.sleep(LEASE_SECONDS)
            assert lease_kept(d)
            filler.unlink()
            assert create(conn, "after") == ("created", "after")
            kept.append("after")
            assert titles(conn) == sorted(kept)
        # the threads' search documents the full disk held back are written once it is not
        wait_for(lambda: stale_documents(d) == 0, what="every thread's search document")
        d.stop()
        d.start()
        with d.client() as conn:
            assert titles(conn) == sorted(kept)
        assert lease_kept(d)
        failed = [line for line in d.log_text().splitlines() if "Traceback" in line]
        assert failed == []


def test_alpd_started_on_a_full_tablespace_serves_reads_and_refuses_writes(
    tmp_path: Path, tiny_database: tuple[str, Path]
) -> None:
    url, disk = tiny_database
    rng = random.Random(20261203)
    with start(tmp_path, url) as d:
        with d.client() as conn:
            kept = [f"kept {i:02}" for i in range(20)]
            for title in kept:
                assert create(conn, title) == ("created", title)
        d.kill9()
        filler = fill(disk)
        d.start()
        with d.client() as conn:
            assert titles(conn) == sorted(kept)
            acknowledged, _ = until_refused(conn, rng)
            kept += acknowledged
            filler.unlink()
            assert create(conn, "after") == ("created", "after")
            assert titles(conn) == sorted([*kept, "after"])
