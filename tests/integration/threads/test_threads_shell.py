"""The Thread's outer shell through the real CLI and socket: create, list, close, archive,
revisions, notifications, slow subscribers, shutdown, exit codes, autostart, import weight.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemons import cli_json
from wire import RawConnection, error_of

from alpctl.client import Client, RpcError
from alpd.testing.daemon import DaemonProcess, daemon_env, running_daemon
from protocol import errors

HEAVY_MODULES = ("anyio", "aiosqlite", "structlog", "msgspec")


def git_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "src" / "deep").mkdir(parents=True)
    return Path(os.path.realpath(path))


def test_create_always_makes_a_new_thread_in_the_git_toplevel_of_cwd(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "repo")
    first = cli_json(alpd, "thread", "create", "--title", "same", cwd=repo / "src" / "deep")
    second = cli_json(alpd, "thread", "create", "--title", "same", cwd=repo / "src" / "deep")
    assert first["id"] != second["id"]
    assert first["id"].startswith("thread_")
    for thread in (first, second):
        assert thread["workspace"] == str(repo)
        assert thread["status"] == "open"
        assert thread["revision"] == 1
        assert thread["title"] == "same"
        assert thread["ownerUid"] == os.getuid()


def test_create_outside_git_uses_the_cwd_itself(alpd: DaemonProcess, tmp_path: Path) -> None:
    plain = tmp_path / "plain" / "dir"
    plain.mkdir(parents=True)
    thread = cli_json(alpd, "thread", "create", cwd=plain)
    assert thread["workspace"] == os.path.realpath(plain)


def test_list_defaults_to_the_callers_workspace(alpd: DaemonProcess, tmp_path: Path) -> None:
    repo_a = git_repo(tmp_path / "a")
    repo_b = git_repo(tmp_path / "b")
    in_a = {cli_json(alpd, "thread", "create", cwd=repo_a)["id"] for _ in range(2)}
    in_b = {cli_json(alpd, "thread", "create", cwd=repo_b / "src")["id"]}
    listed_a = cli_json(alpd, "thread", "list", cwd=repo_a / "src" / "deep")["threads"]
    assert {t["id"] for t in listed_a} == in_a
    listed_b = cli_json(alpd, "thread", "list", cwd=repo_b)["threads"]
    assert {t["id"] for t in listed_b} == in_b
    everywhere = cli_json(alpd, "thread", "list", "--all", cwd=tmp_path)["threads"]
    assert {t["id"] for t in everywhere} == in_a | in_b


def test_list_shows_open_threads_by_default_and_the_flags_widen_it(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    repo = git_repo(tmp_path / "repo")
    elsewhere = git_repo(tmp_path / "elsewhere")
    ids = [cli_json(alpd, "thread", "create", cwd=repo)["id"] for _ in range(3)]
    open_id, closed_id, archived_id = ids
    other_id = cli_json(alpd, "thread", "create", cwd=elsewhere)["id"]
    cli_json(alpd, "thread", "close", closed_id)
    cli_json(alpd, "thread", "close", archived_id)
    cli_json(alpd, "thread", "archive", archived_id)

    def listed(*flags: str) -> set[str]:
        return {t["id"] for t in cli_json(alpd, "thread", "list", *flags, cwd=repo)["threads"]}

    assert listed() == {open_id}
    assert listed("--closed") == {open_id, closed_id}
    assert listed("--archived") == {open_id, archived_id}
    assert listed("--closed", "--archived") == set(ids)
    assert listed("--status", "closed") == {closed_id}
    assert listed("--status", "archived") == {archived_id}
    assert listed("--all") == {*ids, other_id}
    # The daemon's own default, for every client: open threads of the caller's workspace.
    with alpd.client() as client:
        default = client.call("thread/list", {"cwd": str(repo)})["threads"]
        assert [t["id"] for t in default] == [open_id]
        widened = client.call("thread/list", {"cwd": str(repo), "statuses": ["closed"]})
        assert [t["id"] for t in widened["threads"]] == [closed_id]


def test_list_marks_a_thread_whose_root_runs(alpd: DaemonProcess, tmp_path: Path) -> None:
    thread = cli_json(alpd, "thread", "create", cwd=tmp_path)
    started = alpd.call(
        "thread/continue",
        {
            "threadId": thread["id"],
            "runtime": "command",
            "headless": True,
            "args": ["sleep", "30"],
            "cwd": str(tmp_path),
        },
    )
    assert isinstance(started, dict)
    listed = cli_json(alpd, "thread", "list", cwd=tmp_path)["threads"]
    assert listed[0]["busyRoot"] == started["execution"]["id"]
    text = alpd.cli("thread", "list", cwd=str(tmp_path)).stdout
    assert f"{thread['id']}  open busy" in text
    alpd.call("execution/cancel", {"executionId": started["execution"]["id"]})


def test_close_is_final_and_archive_needs_closed(alpd: DaemonProcess, tmp_path: Path) -> None:
    thread = cli_json(alpd, "thread", "create", cwd=tmp_path)
    not_closed = alpd.cli("thread", "archive", thread["id"], "--json")
    assert not_closed.returncode == 1
    assert json.loads(not_closed.stdout)["error"]["name"] == "THREAD_NOT_CLOSED"
    assert "THREAD_NOT_CLOSED" in not_closed.stderr
    closed = cli_json(alpd, "thread", "close", thread["id"])
    assert closed["status"] == "closed" and closed["closedAt"]
    again = alpd.cli("thread", "close", thread["id"])
    assert again.returncode == 1
    assert "THREAD_CLOSED" in again.stderr
    archived = cli_json(alpd, "thread", "archive", thread["id"])
    assert archived["status"] == "archived" and archived["archivedAt"]
    for action in ("close", "archive"):
        done = alpd.cli("thread", action, thread["id"], "--json")
        assert done.returncode == 1
        name = json.loads(done.stdout)["error"]["name"]
        assert name == {"close": "THREAD_CLOSED", "archive": "THREAD_NOT_CLOSED"}[action]


def test_every_write_is_previous_revision_plus_one(alpd: DaemonProcess, tmp_path: Path) -> None:
    with alpd.client() as client:
        thread = client.call("thread/create", {"cwd": str(tmp_path)})
        assert thread["revision"] == 1
        closed = client.call("thread/close", {"threadId": thread["id"], "ifRevision": 1})
        assert closed["revision"] == 2
        archived = client.call("thread/archive", {"threadId": thread["id"], "ifRevision": 2})
        assert archived["revision"] == 3
    db = sqlite3.connect(f"file:{alpd.home / 'alp.db'}?mode=ro", uri=True)
    try:
        rows = db.execute(
            "SELECT revision, change FROM thread_revisions WHERE thread_id = ? ORDER BY revision",
            (thread["id"],),
        ).fetchall()
    finally:
        db.close()
    assert rows == [(1, "created"), (2, "closed"), (3, "archived")]


def test_stale_if_revision_is_a_conflict_naming_the_current_revision(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    with alpd.client() as client:
        thread = client.call("thread/create", {"cwd": str(tmp_path)})
        with pytest.raises(RpcError) as conflict:
            client.call("thread/close", {"threadId": thread["id"], "ifRevision": 7})
        assert conflict.value.name == "THREAD_REVISION_CONFLICT"
        assert conflict.value.code == errors.code_of("THREAD_REVISION_CONFLICT")
        assert conflict.value.data["currentRevision"] == 1
        # The failed write changed nothing.
        listed = client.call("thread/list", {"all": True})["threads"]
        assert [(t["status"], t["revision"]) for t in listed] == [("open", 1)]
    done = alpd.cli("thread", "close", thread["id"], "--if-revision", "0", "--json")
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["name"] == "THREAD_REVISION_CONFLICT"
    assert error["data"]["currentRevision"] == 1


def test_concurrent_closes_with_the_same_if_revision_have_exactly_one_winner(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    thread = alpd.call("thread/create", {"cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    outcomes: list[str] = []
    barrier = threading.Barrier(8)

    def close() -> None:
        with alpd.client() as client:
            barrier.wait()
            try:
                client.call("thread/close", {"threadId": thread["id"], "ifRevision": 1})
                outcomes.append("won")
            except RpcError as exc:
                outcomes.append(exc.name)

    workers = [threading.Thread(target=close) for _ in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
    assert outcomes.count("won") == 1, outcomes
    assert set(outcomes) <= {"won", "THREAD_CLOSED", "THREAD_REVISION_CONFLICT"}


def test_unknown_thread_is_thread_not_found(alpd: DaemonProcess) -> None:
    done = alpd.cli("thread", "close", "thread_doesnotexist", "--json")
    assert done.returncode == 1
    error = json.loads(done.stdout)["error"]
    assert error["name"] == "THREAD_NOT_FOUND"
    assert error["code"] == errors.code_of("THREAD_NOT_FOUND")


def test_subscriber_receives_thread_changed_notifications(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    with RawConnection(alpd.socket_path) as watcher, alpd.client() as actor:
        subscribed = watcher.request("events/subscribe", {})
        assert "thread/changed" in subscribed["result"]["subscribed"]
        thread = actor.call("thread/create", {"title": "watched", "cwd": str(tmp_path)})
        actor.call("thread/close", {"threadId": thread["id"]})
        seen = [watcher.read_json(), watcher.read_json()]
        for note in seen:
            assert note["jsonrpc"] == "2.0"
            assert note["method"] == "thread/changed"
            assert "id" not in note
        assert [n["params"]["change"] for n in seen] == ["created", "closed"]
        assert [n["params"]["thread"]["revision"] for n in seen] == [1, 2]
        assert {n["params"]["thread"]["id"] for n in seen} == {thread["id"]}


def test_subscription_filtered_to_one_thread_sees_only_that_thread(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    with RawConnection(alpd.socket_path) as watcher, alpd.client() as actor:
        mine = actor.call("thread/create", {"cwd": str(tmp_path)})
        watcher.request("events/subscribe", {"threadId": mine["id"]})
        other = actor.call("thread/create", {"cwd": str(tmp_path)})
        actor.call("thread/close", {"threadId": other["id"]})
        actor.call("thread/close", {"threadId": mine["id"]})
        note = watcher.read_json()
        assert note["params"]["thread"]["id"] == mine["id"]
        assert note["params"]["change"] == "closed"


def connections(client: Client) -> int:
    status = client.call("daemon/status")
    return int(status["connections"])


def wait_connections(client: Client, expected: int, timeout: float = 10.0) -> None:
    """Closed connections are counted until the daemon has seen their EOF."""
    deadline = time.monotonic() + timeout
    while connections(client) != expected:
        assert time.monotonic() < deadline, f"connections never became {expected}"
        time.sleep(0.02)


def create_batch(size: int) -> bytes:
    batch = [
        {"jsonrpc": "2.0", "id": i, "method": "thread/create", "params": {"title": "flood"}}
        for i in range(size)
    ]
    return json.dumps(batch).encode() + b"\n"


def test_subscriber_that_never_reads_is_dropped_and_others_are_served(
    alpd: DaemonProcess,
) -> None:
    silent = RawConnection(alpd.socket_path, timeout=30)
    silent.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    assert "result" in silent.request("events/subscribe", {})
    produced = 0
    with alpd.client() as status, RawConnection(alpd.socket_path, timeout=60) as producer:
        wait_connections(status, 3)  # silent, status, producer
        # The queue holds 1024 notifications; the socket buffers hold a few hundred more.
        while connections(status) == 3:
            assert produced < 20_000, "the silent subscriber was never dropped"
            producer.send(create_batch(250))
            assert len(producer.read_json()) == 250
            produced += 250
        assert produced > 1024
        assert connections(status) == 2
        assert "result" in producer.request("daemon/ping", id="still-here")
    # What the silent subscriber finds when it finally reads: a bounded backlog, then the end.
    backlog = silent.read_until_closed(timeout=10)
    silent.close()
    messages = [json.loads(line) for line in backlog.splitlines() if line.strip()]
    notes = [m for m in messages if m.get("method") == "thread/changed"]
    assert 0 < len(notes) < produced
    assert all(m.get("method") == "thread/changed" or "error" in m for m in messages)
    assert alpd.call("daemon/ping")


@pytest.fixture
def own_daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    """Like the `alpd` fixture, but the test ends the daemon itself."""
    with running_daemon(tmp_path) as daemon:
        yield daemon


def test_sigterm_finishes_in_flight_requests_then_exits_zero(own_daemon: DaemonProcess) -> None:
    daemon = own_daemon
    watcher = RawConnection(daemon.socket_path)
    watcher.request("events/subscribe", {})
    writers = [RawConnection(daemon.socket_path, timeout=30) for _ in range(4)]
    for writer in writers:
        writer.send(create_batch(200))
    watcher.read_json()  # the first write committed: the batches are in flight
    assert daemon.process is not None
    daemon.process.send_signal(signal.SIGTERM)
    acknowledged: set[str] = set()
    for writer in writers:
        replies = writer.read_json()
        assert len(replies) == 200
        assert all("result" in reply for reply in replies), replies[:3]
        acknowledged |= {reply["result"]["id"] for reply in replies}
        writer.close()
    watcher.close()
    assert daemon.process.wait(30) == 0
    assert not daemon.socket_path.exists()
    daemon.start()
    listed = daemon.call("thread/list", {"all": True, "limit": 10_000})
    assert isinstance(listed, dict)
    assert acknowledged <= {t["id"] for t in listed["threads"]}
    assert len(acknowledged) == 800


def test_cli_exit_codes(alpd: DaemonProcess, tmp_path: Path) -> None:
    assert alpd.cli("thread", "list").returncode == 0
    assert alpd.cli("ping").returncode == 0
    assert alpd.cli("thread", "close", "thread_nope").returncode == 1
    for usage in (
        ["thread", "frobnicate"],
        ["thread", "close"],
        ["thread", "list", "--status", "sleeping"],
        ["thread", "close", "x", "--if-revision", "two"],
        ["--no-such-flag"],
    ):
        done = alpd.cli(*usage)
        assert done.returncode == 2, (usage, done.stderr)
        assert "Traceback" not in done.stderr
    unreachable = alpd.cli(
        "thread", "list", extra_env={"ALP_SOCKET": str(tmp_path / "nothing.sock")}
    )
    assert unreachable.returncode == 3


def test_cli_json_output_shapes(alpd: DaemonProcess, tmp_path: Path) -> None:
    thread = cli_json(alpd, "thread", "create", "--title", "shape", cwd=tmp_path)
    assert {"id", "title", "workspace", "status", "revision", "contextRevision", "ownerUid"} <= (
        set(thread)
    )
    assert {"createdAt", "updatedAt"} <= set(thread)
    assert all(key[0].islower() and "_" not in key for key in thread)
    listed = cli_json(alpd, "thread", "list", cwd=tmp_path)
    assert list(listed) == ["threads"] and listed["threads"][0]["id"] == thread["id"]
    pong = cli_json(alpd, "ping")
    assert pong["pid"] == alpd.pid
    done = alpd.cli("thread", "archive", thread["id"], "--json")
    error = json.loads(done.stdout)
    assert list(error) == ["error"]
    assert set(error["error"]) == {"code", "name", "message", "data"}
    assert error["error"]["data"]["threadId"] == thread["id"]
    # Human output is not JSON and carries the id.
    human = alpd.cli("thread", "list", cwd=str(tmp_path))
    assert thread["id"] in human.stdout
    with pytest.raises(json.JSONDecodeError):
        json.loads(human.stdout)


def wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def test_autostart_starts_alpd_when_none_answers(tmp_path: Path) -> None:
    sock_dir = Path(tempfile.mkdtemp(prefix="alp-auto-", dir="/tmp"))
    socket_path = sock_dir / "run" / "alpd.sock"
    env = daemon_env(tmp_path / "home", socket_path)
    del env["ALP_NO_AUTOSTART"]
    started_pid = None
    try:
        done = subprocess.run(
            [sys.executable, "-m", "alpctl", "thread", "list", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            cwd=tmp_path,
        )
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout) == {"threads": []}
        assert "started alpd" in done.stderr and str(socket_path) in done.stderr
        started_pid = int(done.stderr.split("(pid ")[1].split(")")[0])
        assert (tmp_path / "home" / "alp.db").exists()
        again = subprocess.run(
            [sys.executable, "-m", "alpctl", "ping", "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert again.returncode == 0
        assert json.loads(again.stdout)["pid"] == started_pid
        assert "started" not in again.stderr
    finally:
        lock = tmp_path / "home" / "alpd.lock"
        if started_pid is None and lock.exists():  # started, but the test failed before
            started_pid = int(lock.read_text().strip() or 0) or None
        if started_pid is not None:
            os.kill(started_pid, signal.SIGTERM)
            assert wait_gone(started_pid, 15)
        subprocess.run(["rm", "-rf", str(sock_dir)], check=False)


def test_no_autostart_exits_3_naming_the_socket_and_how_to_start(tmp_path: Path) -> None:
    socket_path = tmp_path / "run" / "alpd.sock"
    env = daemon_env(tmp_path / "home", socket_path)
    done = subprocess.run(
        [sys.executable, "-m", "alpctl", "thread", "list"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 3
    assert str(socket_path) in done.stderr
    assert "alpd" in done.stderr and "start" in done.stderr
    assert not socket_path.exists()
    assert not (tmp_path / "home").exists()


def test_a_dead_daemon_is_reported_unreachable_not_as_a_crash(
    alpd: DaemonProcess,
) -> None:
    alpd.kill9()
    done = alpd.cli("thread", "list")
    assert done.returncode == 3
    assert "Traceback" not in done.stderr
    with pytest.raises(ConnectionRefusedError):
        RawConnection(alpd.socket_path)


LOADED_HEAVY = (
    "import json, sys\n"
    "heavy = {name.split('.')[0] for name in sys.modules} & set(json.loads(sys.argv[1]))\n"
    "print(json.dumps(sorted(heavy)), file=sys.stderr)\n"
)


def test_importing_the_cli_imports_no_heavy_dependency() -> None:
    code = "import alpctl.cli, alpctl.__main__\n" + LOADED_HEAVY
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(HEAVY_MODULES)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_running_alp_thread_list_imports_no_heavy_dependency(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    code = (
        "import sys\n"
        "from alpctl.cli import main\n"
        "rc = main(['thread', 'list', '--json'])\n"
        "assert rc == 0, rc\n" + LOADED_HEAVY
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(HEAVY_MODULES)],
        env=alpd.env,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"threads": []}
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_error_reply_for_a_closed_thread_carries_its_id(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        thread = conn.request("thread/create", {})["result"]
        conn.request("thread/close", {"threadId": thread["id"]})
        error = error_of(conn.request("thread/close", {"threadId": thread["id"]}))
        assert error["code"] == errors.code_of("THREAD_CLOSED")
        assert error["data"] == {"name": "THREAD_CLOSED", "threadId": thread["id"]}
