"""The check every kill -9 test makes with alpd dead: the thread is whole in its database
(SQLite's file, or PostgreSQL's: `store_access.raw_db`) — its revision log has no gap or
twin, its snapshots chain by digest from revision 0 to the head, and a root is settled
exactly when its outcome is in the head snapshot, never between."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from store_access import raw_db

from alpd.testing.daemon import DaemonProcess

__all__ = ["inspect_whole"]


def inspect_whole(d: DaemonProcess, thread_id: str) -> tuple[int, dict[str, str]]:
    """With alpd dead: check the thread is whole; its context revision and root statuses
    (in its SQLite file, or its PostgreSQL database)."""
    with raw_db(d) as conn:
        revision, context_revision = conn.execute(
            "SELECT revision, context_revision FROM threads WHERE id = ?", (thread_id,)
        ).fetchone()
        logged = [
            r[0]
            for r in conn.execute(
                "SELECT revision FROM thread_revisions WHERE thread_id = ? ORDER BY revision",
                (thread_id,),
            )
        ]
        assert logged == list(range(1, revision + 1)), "the revision log has a gap or a twin"
        rows = conn.execute(
            "SELECT revision, body, digest, previous_digest FROM snapshots "
            "WHERE thread_id = ? ORDER BY revision",
            (thread_id,),
        ).fetchall()
        assert [r[0] for r in rows] == list(range(context_revision + 1))
        previous = None
        snapshot: dict[str, Any] = {}
        for number, body, digest, previous_digest in rows:
            body = bytes(body)  # PostgreSQL's bytea comes as a memoryview
            assert "sha256:" + hashlib.sha256(body).hexdigest() == digest, number
            snapshot = json.loads(body)
            assert snapshot["revision"] == number
            assert previous_digest == snapshot["previousDigest"] == previous, number
            previous = digest
        roots = dict(
            conn.execute(
                "SELECT id, status FROM executions WHERE thread_id = ? AND is_root = 1",
                (thread_id,),
            ).fetchall()
        )
        settled = {r for r, status in roots.items() if status == "settled"}
        projected = {line["sourceExecutionId"] for line in snapshot.get("outcomes", [])}
        # A root is settled exactly when its outcome is in the head snapshot: never between.
        assert projected == settled, (projected, settled)
        assert context_revision == len(settled)
        return context_revision, roots
