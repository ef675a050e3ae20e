"""One person on two hosts where their local uids differ (issue 24, point 5;
docs/many-machines.md, "One person across hosts"): alice's first host is a real alpd under this
test's uid, her second a real alpd under another local uid (`DESK_UID`, as root can make one),
both on one PostgreSQL database as the role alice. The second host lists, shows and continues
the threads the first made — its root runs there, as its uid, in its own checkout of the
same repository — and what it makes the first lists; each socket still lets only its own uid
through (a call from the first host's uid to the second's socket is PERMISSION_DENIED).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from daemons import roots
from person_roles import run_root, shared_database, start
from postgres_cluster import Cluster, as_role

from alpd.testing.daemon import daemon_env

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.needs_root,
    pytest.mark.skipif(
        os.geteuid() != 0, reason="needs root: only root can run alpd as a second uid"
    ),
]

#: alice's uid on her second host (no such user needs to exist)
DESK_UID = 54330
REMOTE = "git@github.com:alice/parser.git"
#: the agent both hosts run: it writes the uid it ran as into its cwd
RAN_AS = '\n[agents.whoami]\nruntime = "command"\nargs = ["sh", "-c", "id -u > ran-as"]\n'
#: a client of the second host's socket, run as its uid: one call, its result or error as JSON
CLIENT = """
import json, sys
from alpctl.client import Client, RpcError
try:
    print(json.dumps({"result": Client.connect(sys.argv[1]).call(sys.argv[2],
                                                                json.loads(sys.argv[3]))}))
except RpcError as exc:
    print(json.dumps({"error": exc.name}))
"""


@pytest.fixture
def database(postgres_cluster: Cluster) -> Iterator[str]:
    yield from shared_database(postgres_cluster)


def as_desk(*command: str) -> list[str]:
    return ["setpriv", f"--reuid={DESK_UID}", f"--regid={DESK_UID}", "--clear-groups", *command]


def checkout(path: Path, *, uid: int | None = None) -> Path:
    """A git checkout of REMOTE at `path` (made as `uid` when given)."""
    path.mkdir()
    if uid is not None:
        os.chown(path, uid, uid)
    for git in (["git", "init", "-q", str(path)],
                ["git", "-C", str(path), "remote", "add", "origin", REMOTE]):  # fmt: skip
        subprocess.run(as_desk(*git) if uid is not None else git, check=True, capture_output=True)
    return path


@dataclass
class Desk:
    """Alice's second host: a real alpd run as DESK_UID, spoken to as DESK_UID."""

    base: Path
    socket_path: Path
    process: subprocess.Popen[bytes]

    def ask(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        done = subprocess.run(
            as_desk(sys.executable, "-P", "-c", CLIENT, str(self.socket_path), method,
                    json.dumps(params or {})),
            capture_output=True, text=True, timeout=60, cwd=self.base,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        answer: dict[str, Any] = json.loads(done.stdout)
        return answer

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        answer = self.ask(method, params)
        assert "result" in answer, (method, answer, self.log())
        return answer["result"]

    def log(self) -> str:
        return (self.base / "alpd.log").read_text(errors="replace")


@contextlib.contextmanager
def desk_alpd(url: str) -> Iterator[Desk]:
    """alpd as DESK_UID in a directory of its own under /tmp (pytest's is root's, 0700)."""
    base = Path(tempfile.mkdtemp(prefix="alp-desk-", dir="/tmp"))
    base.chmod(0o755)
    mine = [base / name for name in ("home", "run", "xdg")]
    for path in mine:
        path.mkdir(mode=0o700)
        os.chown(path, DESK_UID, DESK_UID)
    (base / "config.toml").write_text('[person]\nname = "alice"\n[host]\nname = "desk"\n' + RAN_AS)
    socket_path = base / "run" / "alpd.sock"
    env = daemon_env(base / "home", socket_path, {"ALP_STORE_URL": url})
    env.update({"HOME": str(base / "home"), "XDG_RUNTIME_DIR": str(base / "xdg")})
    log = (base / "alpd.log").open("wb")
    process = subprocess.Popen(
        as_desk(sys.executable, "-P", "-m", "alpd", "--config", str(base / "config.toml")),
        env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=base,
        start_new_session=True,
    )  # fmt: skip
    desk = Desk(base, socket_path, process)
    try:
        deadline = time.monotonic() + 30
        while "result" not in (desk.ask("daemon/ping") if socket_path.exists() else {}):
            assert process.poll() is None, desk.log()
            assert time.monotonic() < deadline, desk.log()
            time.sleep(0.1)
        yield desk
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()
        shutil.rmtree(base, ignore_errors=True)


def refused_here(socket_path: Path) -> dict[str, Any]:
    """A request to `socket_path` from this test's uid, written as any client would."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(socket_path))
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            sock.sendall(b'{"jsonrpc":"2.0","id":1,"method":"thread/list","params":{}}\n')
        reply = sock.makefile("rb").readline()
    answer: dict[str, Any] = json.loads(reply)
    return answer


def test_the_second_host_under_another_uid_sees_and_continues_the_first_hosts_threads(
    database: str, tmp_path: Path
) -> None:
    url = as_role(database, "alice")
    assert os.getuid() != DESK_UID
    laptop_repo = checkout(tmp_path / "parser")
    with start(tmp_path / "laptop", url, "alice", '[host]\nname = "laptop"\n') as laptop:
        made = laptop.call("thread/create", {"title": "Parser work", "cwd": str(laptop_repo)})
        assert isinstance(made, dict)
        assert made["ownerUid"] == os.getuid()  # her first host: her number is its uid
        assert run_root(laptop, made["id"], laptop_repo)["outcome"] == "completed"

        with desk_alpd(url) as desk:
            answer = refused_here(desk.socket_path)
            assert answer["error"]["data"]["name"] == "PERMISSION_DENIED"
            assert f"uid {os.getuid()} is not the owner" in answer["error"]["message"]

            listed = desk.call("thread/list", {"all": True})
            assert [t["id"] for t in listed["threads"]] == [made["id"]]
            shown = desk.call("thread/show", {"threadId": "Parser work"})
            assert shown["thread"]["ownerUid"] == os.getuid()
            assert len(shown["roots"]) == 1

            desk_repo = checkout(desk.base / "parser", uid=DESK_UID)
            started = desk.call(
                "thread/continue",
                {"threadId": made["id"], "agent": "whoami", "headless": True,
                 "cwd": str(desk_repo)},
            )  # fmt: skip
            execution = started["execution"]["id"]
            done = desk.call("execution/wait", {"executionId": execution, "timeout": 60})
            assert (done["status"], done["outcome"]) == ("settled", "completed")
            assert (desk_repo / "ran-as").read_text().strip() == str(DESK_UID)
            desk_made = desk.call("thread/create", {"title": "Desk work", "cwd": str(desk_repo)})
            assert desk_made["ownerUid"] == os.getuid()
            claimed = f'"person": "alice", "owner": {os.getuid()}, "uid": {DESK_UID}'
            assert claimed in desk.log()

            # back on the laptop: the desk's root is in her thread, and its new thread listed
            seen = roots(laptop, made["id"])
            assert [r["id"] for r in seen][-1] == execution
            assert seen[-1]["hostName"] == "desk"
            assert seen[-1]["status"] == "settled"
            listed_here = laptop.call("thread/list", {"all": True})
            assert isinstance(listed_here, dict)
            assert {t["id"] for t in listed_here["threads"]} == {made["id"], desk_made["id"]}
