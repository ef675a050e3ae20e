"""What the tests of persons on one PostgreSQL database share (docs/many-machines.md, "One
person across hosts"): a fresh database whose schema the admin made, with two login roles,
alice and bob, that are neither superusers nor BYPASSRLS; a real alpd of one of them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from daemons import settled
from postgres_cluster import Cluster, admin_url

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess, running_daemon

ROLES = ("alice", "bob")


def shared_database(cluster: Cluster) -> Iterator[str]:
    """A fresh database and the two persons' roles; its URL as the admin (a fixture's body)."""
    url = admin_url(cluster.new_database())
    with psycopg.connect(url, autocommit=True) as conn:
        for role in ROLES:
            conn.execute(
                f"DO $$BEGIN CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS; "
                "EXCEPTION WHEN duplicate_object THEN NULL; END$$"
            )
    try:
        yield url
    finally:
        cluster.drop_database(url)


def person_config(name: str | None, more: str = "") -> str:
    """`[person] name` when given, an agent `ok` that succeeds, and `more`."""
    person = f'[person]\nname = "{name}"\n' if name else ""
    return person + '[agents.ok]\nruntime = "command"\nargs = ["true"]\n' + more


def start(base: Path, url: str, person: str | None = None, more: str = "") -> Any:
    """A real alpd in `base` on the database `url` (a person's role)."""
    base.mkdir(parents=True)
    (base / "config.toml").write_text(person_config(person, more))
    return running_daemon(
        base, extra_env={"ALP_STORE_URL": url}, extra_args=["--config", str(base / "config.toml")]
    )


def thread_ids(d: DaemonProcess) -> set[str]:
    listed = d.call("thread/list", {"all": True})
    assert isinstance(listed, dict)
    return {t["id"] for t in listed["threads"]}


def refused(d: DaemonProcess, method: str, params: dict[str, Any]) -> str:
    with pytest.raises(RpcError) as raised:
        d.call(method, params)
    return str(raised.value.name)


def run_root(d: DaemonProcess, thread_id: str, cwd: Path) -> dict[str, Any]:
    started = d.call(
        "thread/continue",
        {"threadId": thread_id, "agent": "ok", "headless": True, "cwd": str(cwd)},
    )
    assert isinstance(started, dict)
    return settled(d, started["execution"]["id"])
