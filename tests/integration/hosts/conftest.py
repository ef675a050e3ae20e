"""Two real alpd (two homes, two host ids) on ONE database, on either backend (`both_stores`):
on SQLite one file (WAL: two processes on one machine may share it; alp.db in B's home is a
symlink to A's, which SQLite resolves, so both use one WAL), on PostgreSQL one database
(`ALP_STORE_URL` for both), as two machines would (docs/many-machines.md)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

from alpd.testing.daemon import DaemonProcess, running_daemon

TICK = "echo $ALP_EXECUTION_ID >> ticks"


def config(name: str) -> str:
    return f"""
[host]
name = "{name}"
lease = "3s"

[agents.tick]
runtime = "command"
args = ["sh", "-c", "{TICK}"]
"""


@pytest.fixture
def hosts(tmp_path: Path, store_url: str | None) -> Iterator[tuple[DaemonProcess, DaemonProcess]]:
    """Host A and host B on one database (`store_url`: None on SQLite)."""
    with ExitStack() as stack:
        daemons = []
        for name in ("a", "b"):
            base = tmp_path / name
            (base / "home").mkdir(parents=True, mode=0o700)
            (base / "config.toml").write_text(config(f"host-{name}"))
            if name == "b" and store_url is None:
                (base / "home" / "alp.db").symlink_to(tmp_path / "a" / "home" / "alp.db")
            args = ["--config", str(base / "config.toml")]
            env = {"ALP_STORE_URL": store_url} if store_url else {}
            daemons.append(
                stack.enter_context(running_daemon(base, extra_args=args, extra_env=env))
            )
        yield daemons[0], daemons[1]
