"""A thread's workspace recorded as its repository (issue 24, point 6): the remote normalised
and the path within the checkout, beside the host's path; after a bundle moves the thread,
`continue` runs in the new host's checkout of the same repository, or says there is none."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import msgspec
import pytest
from daemons import starter
from test_thread_invariants import rpc_error, run_root

from alpd.errors import WorkspaceNotFound
from alpd.services.threads.workspaces import Placement, place
from alpd.testing.daemon import DaemonProcess
from protocol.messages import Thread

REMOTE = "https://x-access-token:ghp_notarealtoken123@github.com/Owner/Parser.git"


def checkout(path: Path, remote: str = REMOTE) -> Path:
    """A git checkout at `path` whose origin is `remote`."""
    path.mkdir(parents=True)
    for args in (["init", "-q"], ["remote", "add", "origin", remote]):
        subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True)
    return path


@pytest.fixture(scope="module")
def hosts(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[DaemonProcess, DaemonProcess]]:
    with ExitStack() as stack:
        yield (
            starter(tmp_path_factory.mktemp("ws-a"), stack)(),
            starter(tmp_path_factory.mktemp("ws-b"), stack)(),
        )


def test_a_thread_records_its_repository_without_credentials(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, _ = hosts
    repo = checkout(tmp_path / "parser")
    (repo / "pkg").mkdir()
    thread = a.call("thread/create", {"title": "t", "cwd": str(repo / "pkg")})
    assert thread["workspace"] == str(repo.resolve())
    assert thread["workspaceRemote"] == "github.com/Owner/Parser"
    assert thread["workspaceSubpath"] == ""
    inner = a.call("thread/create", {"title": "t", "workspace": str(repo / "pkg")})
    assert inner["workspaceSubpath"] == "pkg"
    plain = tmp_path / "plain"
    plain.mkdir()
    bare = a.call("thread/create", {"title": "t", "cwd": str(plain)})
    assert "workspaceRemote" not in bare  # not a checkout: only the path
    assert b"ghp_notarealtoken123" not in (a.home / "alp.db").read_bytes()


def test_a_moved_thread_continues_in_this_hosts_checkout_or_says_there_is_none(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    a, b = hosts
    on_a = checkout(tmp_path / "a" / "parser")
    thread_id = a.call("thread/create", {"title": "moving", "cwd": str(on_a)})["id"]
    run_root(a, thread_id, "true", on_a)
    bundle = tmp_path / "moving.alp.gz"
    assert a.cli("thread", "export", thread_id, "-o", str(bundle)).returncode == 0
    on_a.rename(tmp_path / "a" / "gone")  # host B has no checkout at A's path
    assert b.call("thread/import", {"path": str(bundle)})["imported"] is True
    # From a directory that is no checkout of it: refused, naming the repository.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    error = rpc_error(
        b,
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "headless": True, "args": ["true"],
         "cwd": str(elsewhere)},
    )  # fmt: skip
    assert error.name == "WORKSPACE_NOT_FOUND"
    assert error.data["remote"] == "github.com/Owner/Parser"
    # From B's own clone (another path, the same remote over ssh): it runs there, and the
    # thread's workspace is B's checkout from now on.
    on_b = checkout(tmp_path / "b" / "src" / "parser", "git@github.com:Owner/Parser.git")
    root = run_root(b, thread_id, "pwd > where.txt", on_b)
    assert root["outcome"] == "completed"
    assert (on_b / "where.txt").read_text().strip() == str(on_b.resolve())
    thread = b.call("thread/show", {"threadId": thread_id})["thread"]
    assert thread["workspace"] == str(on_b.resolve())
    assert thread["workspaceRemote"] == "github.com/Owner/Parser"


def test_a_background_root_runs_at_the_recorded_checkout_not_another_hosts_path(
    tmp_path: Path,
) -> None:
    """What a push or a schedule asks (the cwd its last root's policy names, which may be
    another host's path): the recorded checkout when it is one, else refused."""
    repo = checkout(tmp_path / "here")
    thread = Thread(
        id="thread_x", title=None, workspace=str(repo.resolve()), status="open", revision=1,
        context_revision=0, owner_uid=0, created_at="t", updated_at="t",
        workspace_remote="github.com/Owner/Parser", workspace_subpath="",
    )  # fmt: skip
    assert place(thread, "/nonexistent/on/this/host") == Placement(str(repo.resolve()), {})
    moved = msgspec.structs.replace(thread, workspace="/nonexistent/either")
    with pytest.raises(WorkspaceNotFound):
        place(moved, "/nonexistent/on/this/host")
    # A thread from before the columns: filled in at its next root.
    old = msgspec.structs.replace(thread, workspace_remote=None, workspace_subpath=None)
    assert place(old, str(repo)).sets == {
        "workspace_remote": "github.com/Owner/Parser",
        "workspace_subpath": "",
    }
