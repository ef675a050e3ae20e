"""A bad day on the machine: alpd refuses to start with the path and the reason — exit code
1, one line, no traceback — and calls a database damaged only when it is (issue 9, point 8).

Read-only places are made with read-only bind mounts (root only: root ignores permission
bits, and CI runs as root; under CI=true a skip is a failure).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from alpd.testing.daemon import daemon_env, running_daemon


def needs_root() -> None:
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            pytest.fail("read-only bind mounts need root, and CI runs as root")
        pytest.skip("read-only bind mounts need root")


@contextlib.contextmanager
def read_only(path: Path) -> Iterator[Path]:
    """`path` (a file or directory) read-only for everybody, root included."""
    needs_root()
    subprocess.run(["mount", "--bind", str(path), str(path)], check=True)
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True)
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def start_alpd(
    home: Path,
    socket_path: Path | None = None,
    *args: str,
    launcher: str | None = None,
    pass_fds: tuple[int, ...] = (),
) -> subprocess.CompletedProcess[str]:
    socket_path = socket_path or Path(f"/tmp/alp-bad-{os.getpid()}/s.sock")
    command = [sys.executable, "-m", "alpd", "--home", str(home), "--socket", str(socket_path)]
    if launcher is not None:
        command = [sys.executable, "-c", launcher, *command[1:]]
    return subprocess.run(
        [*command, *args],
        env=daemon_env(home, socket_path),
        capture_output=True,
        text=True,
        timeout=60,
        pass_fds=pass_fds,
    )


def refusal(result: subprocess.CompletedProcess[str]) -> str:
    """The one line alpd printed when it refused to start."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("alpd: ")]
    assert len(lines) == 1, result.stderr
    return lines[0]


# config.toml


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'[agents.a]\nruntime = "claude"\ninstructions = "caf\xe9"\n', "3: is not UTF-8"),
        (b"a = " + b"[" * 50_000 + b"]" * 50_000 + b"\n", "nested too deeply"),
    ],
    ids=["latin-1", "nested-50000"],
)
def test_a_config_that_cannot_be_read_as_toml_is_refused(
    tmp_path: Path, content: bytes, reason: str
) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (home / "config.toml").write_bytes(content)
    line = refusal(start_alpd(home))
    assert str(home / "config.toml") in line and reason in line, line


def test_a_config_that_is_a_directory_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "config.toml").mkdir(parents=True)
    home.chmod(0o700)
    line = refusal(start_alpd(home))
    assert f"{home / 'config.toml'}: is a directory" in line, line


def test_a_config_under_a_file_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    (tmp_path / "plain").write_text("")
    line = refusal(start_alpd(home, None, "--config", str(tmp_path / "plain" / "config.toml")))
    assert "plain/config.toml: cannot be read: Not a directory" in line, line


# home, lock and socket directory


def test_a_home_on_a_read_only_filesystem_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "ro"
    base.mkdir()
    with read_only(base):
        line = refusal(start_alpd(base / "home"))
    assert str(base / "home") in line and "Read-only file system" in line, line


def test_a_home_whose_lock_cannot_be_written_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    with read_only(home):
        line = refusal(start_alpd(home))
    assert str(home / "alpd.lock") in line and "Read-only file system" in line, line


def test_a_socket_directory_that_cannot_be_made_is_refused(tmp_path: Path) -> None:
    base = tmp_path / "ro"
    base.mkdir()
    with read_only(base):
        line = refusal(start_alpd(tmp_path / "home", base / "sock" / "alpd.sock"))
    assert str(base / "sock") in line and "Read-only file system" in line, line


# sockets handed over by a service manager

LAUNCHER = (
    "import os, sys; fd = int(os.environ.pop('TEST_FD', '-1')); "
    "fd >= 0 and os.dup2(fd, 3); "
    "os.environ['LISTEN_PID'] = str(os.getpid()); "
    "os.environ['LISTEN_FDS'] = os.environ.pop('TEST_LISTEN_FDS'); "
    "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])"
)


def start_activated(
    tmp_path: Path, listen_fds: str, sock: socket.socket | None = None
) -> subprocess.CompletedProcess[str]:
    home = tmp_path / "home"
    env = daemon_env(home, tmp_path / "unused.sock")
    env["TEST_LISTEN_FDS"] = listen_fds
    fds: tuple[int, ...] = ()
    if sock is not None:
        env["TEST_FD"] = str(sock.fileno())
        fds = (sock.fileno(),)
    return subprocess.run(
        [sys.executable, "-c", LAUNCHER, "-m", "alpd", "--home", str(home)],
        env=env, capture_output=True, text=True, timeout=60, pass_fds=fds,
    )  # fmt: skip


def test_an_inherited_abstract_socket_is_refused(tmp_path: Path) -> None:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as abstract:
        abstract.bind(f"\0alp-test-{os.getpid()}")
        abstract.listen(4)
        line = refusal(start_activated(tmp_path, "1", abstract))
    assert "fd 3" in line and "not to a path" in line, line


@pytest.mark.parametrize(
    ("listen_fds", "reason"),
    [("abc", "not a number"), ("-1", "0 to 16"), ("100000", "0 to 16"), ("2", "fd 3")],
)
def test_bad_listen_fds_is_refused(tmp_path: Path, listen_fds: str, reason: str) -> None:
    line = refusal(start_activated(tmp_path, listen_fds))
    assert "LISTEN_FDS" in line or "fd 3" in line, line
    assert reason in line, line


# the database


def test_a_database_with_a_dropped_table_is_refused_as_damaged(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as d:
        d.call("thread/create", {"title": "kept", "cwd": str(tmp_path)})
        db = d.home / "alp.db"
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE thread_revisions")
    line = refusal(start_alpd(tmp_path / "home"))
    assert str(db) in line and "lacks table thread_revisions" in line, line


def test_a_read_only_database_file_is_refused_and_not_called_damaged(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as d:
        d.call("thread/create", {"title": "kept", "cwd": str(tmp_path)})
        db = d.home / "alp.db"
    with read_only(db):
        line = refusal(start_alpd(tmp_path / "home"))
    assert str(db) in line and "cannot be opened for writing" in line, line
    assert "move it aside" not in line and "damaged" not in line
    with running_daemon(tmp_path) as d:
        assert [t["title"] for t in d.call("thread/list", {"all": True})["threads"]] == ["kept"]


# a database that is not alp's

ALP_APPLICATION_ID = 0x616C7064  # "alpd"


def application_id(db: Path) -> int:
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return int(conn.execute("PRAGMA application_id").fetchone()[0])


@pytest.mark.parametrize(
    "make",
    [
        "CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)",
        "PRAGMA application_id = 1196444237",  # a GeoPackage's, no tables yet
        "PRAGMA user_version = 3",  # someone's versioned database, empty
    ],
    ids=["other-tables", "other-application-id", "other-user-version"],
)
def test_a_foreign_sqlite_file_at_alp_db_is_refused_not_adopted(tmp_path: Path, make: str) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    db = home / "alp.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute(make)
        conn.commit()
    before = db.read_bytes()
    line = refusal(start_alpd(home))
    assert str(db) in line and "not alp's" in line, line
    assert "ALP_HOME" in line, line
    assert db.read_bytes() == before  # untouched: no alp table was added to it


def test_alps_databases_carry_its_application_id(tmp_path: Path) -> None:
    with running_daemon(tmp_path) as d:
        d.call("thread/create", {"title": "kept", "cwd": str(tmp_path)})
        db = d.home / "alp.db"
    assert application_id(db) == ALP_APPLICATION_ID


def test_an_alp_database_from_before_the_application_id_is_recognised_by_its_tables(
    tmp_path: Path,
) -> None:
    with running_daemon(tmp_path) as d:
        d.call("thread/create", {"title": "kept", "cwd": str(tmp_path)})
        db = d.home / "alp.db"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        conn.execute("PRAGMA application_id = 0")
        conn.commit()
    with running_daemon(tmp_path) as d:
        assert [t["title"] for t in d.call("thread/list", {"all": True})["threads"]] == ["kept"]
    assert application_id(db) == ALP_APPLICATION_ID
