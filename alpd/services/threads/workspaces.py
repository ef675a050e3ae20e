"""Where a thread's next root runs when its workspace is a repository (issue 24, point 6;
docs/many-machines.md).

A thread records its workspace's path on this host and, when the workspace is a git checkout
with a remote, the repository's identity: the remote normalised and the path within the
checkout (`alpd.domain.threads.repository`). Before each root (`place_root`):

1. **No identity recorded** (a thread from before, or not a checkout): the recorded path is
   asked again and the identity filled in if it now is one; the root runs where it would.
2. **The cwd is a checkout of the same repository** (the person's `alp thread continue` from
   their own clone, on this host or another): the root runs there, and the thread's recorded
   path becomes that checkout (+ the path within it), so background roots follow.
3. **The recorded path is a checkout of the same repository here**: the root runs in the cwd
   when it exists (a person continuing from elsewhere, as before), else at the recorded path
   (a background root whose last policy names another host's path).
4. **Neither**: WORKSPACE_NOT_FOUND, naming the repository and what to do (cd into a checkout
   of it, or clone it). A bundle imported from another host lands here until then.
"""

from __future__ import annotations

import os
from typing import Any, NamedTuple

import anyio

from alpd.errors import WorkspaceNotFound
from alpd.store.db import Store
from alpd.store.threads.shell import find_thread
from alpd.workspace import repository_of
from protocol.messages import Thread

__all__ = ["Placement", "place", "place_root"]


class Placement(NamedTuple):
    #: the cwd the root runs in
    cwd: str | None
    #: the thread's columns to record in the unit that reserves the root
    sets: dict[str, Any]


async def place_root(store: Store, thread_id: str, cwd: str | None) -> Placement:
    """`place` for the thread as stored (its git questions off the event loop)."""
    thread = await find_thread(store, thread_id)
    return await anyio.to_thread.run_sync(place, thread, cwd)


def place(thread: Thread, cwd: str | None) -> Placement:
    """Where the root runs and what to record (module docstring; blocking: asks git)."""
    remote = thread.workspace_remote
    if remote is None:
        found = repository_of(thread.workspace)
        if found is None:
            return Placement(cwd, {})
        return Placement(
            cwd, {"workspace_remote": found.remote, "workspace_subpath": found.subpath}
        )
    subpath = thread.workspace_subpath or ""
    here = repository_of(cwd) if cwd is not None else None
    if cwd is not None and here is not None and here.remote == remote:
        resolved = os.path.realpath(cwd)
        top = (
            resolved[: len(resolved) - len(here.subpath)].rstrip("/") if here.subpath else resolved
        )
        workspace = os.path.join(top, subpath) if subpath else top
        return Placement(cwd, {} if workspace == thread.workspace else {"workspace": workspace})
    recorded = repository_of(thread.workspace)
    if recorded is not None and recorded.remote == remote:
        runs_in = cwd if cwd is not None and os.path.isdir(cwd) else thread.workspace
        return Placement(runs_in, {})
    where = f" ({subpath})" if subpath else ""
    raise WorkspaceNotFound(
        f"thread {thread.id} works in the repository {remote}{where}; this host has no "
        f"checkout of it at {thread.workspace}, and {cwd or 'the cwd'} is not one: cd into "
        "your checkout of it (or clone it) and continue from there",
        threadId=thread.id,
        remote=remote,
        subpath=subpath,
        workspace=thread.workspace,
    )
