"""A private PostgreSQL cluster for the tests: Debian's server binaries, a temp directory,
a Unix socket only (no TCP port), trust authentication, stopped at the end of the session.

PostgreSQL refuses to run as root: under root (CI) the cluster runs as `nobody`, its
directory handed to that user. `make postgres` installs the server with apt; without it the
tests that need it skip, which `CI=true` turns into a failure (`tests/ci_gate.py`, marker
`postgres`).

Each test gets a database of its own, copied from a template that has the schema already
(`CREATE DATABASE … TEMPLATE`: a file copy, ~100 ms, not the 60 statements of the baseline).

Two roles, as a shared database has them (docs/many-machines.md, "Setting up several persons
on one database"): `ADMIN` made the cluster and the schema (a superuser: it sees every row),
and `PERSON` is whom alpd and the tests connect as — a login role that is neither superuser
nor BYPASSRLS nor the tables' owner, so every store test runs under the row-level security
that binds a person to their rows. A test that must act as the admin (a trigger dropped to
tamper, another session's backend ended) asks for `admin_url`.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Final

__all__ = ["ADMIN", "PERSON", "Cluster", "admin_url", "as_role", "find_bin", "running_cluster"]

#: the cluster's superuser, which makes the schema; the person alpd and the tests connect as;
#: the template database with alp's schema
ADMIN: Final = "alp"
PERSON: Final = "person"
TEMPLATE: Final = "alp_template"
_START_TIMEOUT: Final = 60


def find_bin() -> Path | None:
    """The newest installed server's bin directory (Debian: /usr/lib/postgresql/N/bin)."""
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[4])
    )
    return Path(found[-1]).parent if found else None


def as_role(url: str, role: str) -> str:
    """A cluster URL (`Cluster.url`) connecting as `role` instead."""
    head, _, _ = url.rpartition("&user=")
    return f"{head}&user={role}"


def admin_url(url: str) -> str:
    """The same database as the admin (a superuser: every row, and the schema's owner)."""
    return as_role(url, ADMIN)


class Cluster:
    def __init__(self, socket_dir: Path, owner: str | None = None):
        self.socket_dir = socket_dir
        #: the user the server runs as (`nobody` under root), None for the tests' own
        self.owner = owner
        self._numbers = itertools.count(1)

    def url(self, database: str, role: str = PERSON) -> str:
        return f"postgresql:///{database}?host={self.socket_dir}&user={role}"

    def new_database(self) -> str:
        """A fresh database with alp's schema, for one test; its URL, as `PERSON`."""
        import psycopg

        name = f"alp_test_{os.getpid()}_{next(self._numbers)}"
        with psycopg.connect(self.url("postgres", ADMIN), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.split("?")[0].rsplit("/", 1)[1]
        with psycopg.connect(self.url("postgres", ADMIN), autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _as_owner(command: list[str], owner: str | None) -> list[str]:
    return ["runuser", "-u", owner, "--", *command] if owner else command


@contextlib.contextmanager
def running_cluster(bin_dir: Path, *, fsync: bool = False) -> Iterator[Cluster]:
    """A cluster for the tests (`fsync=off`: nothing in it must survive a crash); the bench
    asks for `fsync=True`, to compare with SQLite's `synchronous=FULL` on equal terms."""
    owner = "nobody" if os.geteuid() == 0 else None
    top = Path(tempfile.mkdtemp(prefix="alp-pg-"))
    data = top / "data"
    if owner:
        entry = pwd.getpwnam(owner)
        os.chown(top, entry.pw_uid, entry.pw_gid)
    top.chmod(0o755)
    env = {**os.environ, "LC_ALL": "C.UTF-8"}
    run = {"check": True, "capture_output": True, "env": env, "cwd": top}
    subprocess.run(
        _as_owner(
            [str(bin_dir / "initdb"), "-D", str(data), "-U", ADMIN, "--auth=trust", "-E", "UTF8"],
            owner,
        ),
        **run,  # type: ignore[arg-type]
    )
    durable = "on" if fsync else "off"
    options = f"-c listen_addresses='' -k {top} -c fsync={durable} -c max_connections=200"
    subprocess.run(
        _as_owner(
            [
                str(bin_dir / "pg_ctl"),
                "-D",
                str(data),
                "-o",
                options,
                "-l",
                str(top / "log"),
                "-w",
                "-t",
                str(_START_TIMEOUT),
                "start",
            ],
            owner,
        ),
        **run,  # type: ignore[arg-type]
    )
    try:
        cluster = Cluster(top, owner)
        _make_template(cluster)
        yield cluster
    finally:
        subprocess.run(
            _as_owner([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"], owner),
            check=False,
            capture_output=True,
            cwd=top,
        )
        shutil.rmtree(top, ignore_errors=True)


def _make_template(cluster: Cluster) -> None:
    import anyio
    import psycopg

    from alpd.store.postgres.store import PostgresStore

    with psycopg.connect(cluster.url("postgres", ADMIN), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {TEMPLATE}")
        conn.execute(f"CREATE ROLE {PERSON} LOGIN NOSUPERUSER NOBYPASSRLS")

    async def migrate() -> None:
        store = await PostgresStore.connect(cluster.url(TEMPLATE, ADMIN))
        await store.close()

    anyio.run(migrate)
