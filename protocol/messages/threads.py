"""A thread's outer shell (`thread/create|list|close|archive`) and `events/subscribe`."""

from __future__ import annotations

from protocol.messages.base import AbsolutePath, Kind, Revision, ThreadStatus, Title, Wire


class Thread(Wire):
    id: str
    title: str | None
    workspace: str
    status: ThreadStatus
    revision: int
    context_revision: int
    owner_uid: int
    created_at: str
    updated_at: str
    context_digest: str | None = None
    closed_at: str | None = None
    archived_at: str | None = None
    busy_root: str | None = None
    root_count: int = 0
    #: the kind of the newest root (thread/list only), None before the first
    last_kind: Kind | None = None
    #: the recap's headline (derived by a model, not authority); `thread/list`, and
    #: `thread/changed` with change `recap` (absent there: the recap lapsed)
    headline: str | None = None
    #: the workspace's repository, when it is a git checkout with a remote: the remote's URL
    #: normalised (`host/owner/repo`, no credentials, no scheme, no `.git`) and the
    #: workspace's path within the checkout ('' at its top); how another host finds its own
    #: checkout (docs/many-machines.md)
    workspace_remote: str | None = None
    workspace_subpath: str | None = None


class ThreadCreateParams(Wire):
    title: Title | None = None
    workspace: AbsolutePath | None = None
    cwd: AbsolutePath | None = None


class ThreadRef(Wire):
    thread_id: str
    if_revision: Revision | None = None


class ThreadListParams(Wire):
    workspace: AbsolutePath | None = None
    cwd: AbsolutePath | None = None
    #: every workspace and every status
    all: bool = False
    #: only this status (as `statuses: [status]`)
    status: ThreadStatus | None = None
    #: only these statuses; default: open threads only (with `all`: every status)
    statuses: list[ThreadStatus] | None = None
    limit: int = 200


class ThreadListResult(Wire):
    threads: list[Thread]


# events/*


class SubscribeParams(Wire):
    events: list[str] | None = None
    thread_id: str | None = None


class SubscribeResult(Wire):
    subscribed: list[str]


class ThreadChanged(Wire):
    thread: Thread
    change: str


__all__ = [
    "SubscribeParams",
    "SubscribeResult",
    "Thread",
    "ThreadChanged",
    "ThreadCreateParams",
    "ThreadListParams",
    "ThreadListResult",
    "ThreadRef",
]
