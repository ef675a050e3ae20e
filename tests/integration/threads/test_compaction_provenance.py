"""Compaction provenance is complete and stored: every line every cap event dropped, every
record (not only the snapshot's last few, each listing a few lines), through thread/context."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from daemons import settled, start_headless

from alpd.testing.daemon import DaemonProcess

ROOTS = 4
PINS_PER_ROOT = 12  # 12 pins of ~3.9 KiB: each root alone overflows the 32 KiB cap


def context(d: DaemonProcess, thread_id: str, revision: int | None = None) -> dict[str, Any]:
    params: dict[str, Any] = {"threadId": thread_id}
    if revision is not None:
        params["revision"] = revision
    result: dict[str, Any] = d.call("thread/context", params)  # type: ignore[assignment]
    return result


def line_ids(snapshot: dict[str, Any]) -> set[str]:
    sections = ("decisions", "constraints", "openItems", "nextActions", "resolved", "outcomes")
    return {line["id"] for section in sections for line in snapshot[section]}


def test_every_dropped_line_of_every_compaction_is_stored_and_served(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = d.call("thread/create", {"title": "big", "cwd": str(work)})["id"]  # type: ignore[index]
    for root in range(ROOTS):
        script = (
            f"for i in $(seq {PINS_PER_ROOT}); do "
            f"alp context pin decision -- \"r{root}-$i $(printf '%03900d' 0)\" || exit 1; done"
        )
        started = start_headless(d, thread_id, work, ["sh", "-c", script])
        assert settled(d, started["id"])["outcome"] == "completed"

    head = context(d, thread_id)
    assert head["revision"] == ROOTS
    records = head["compactions"]
    # Every projection overflowed: one full record per revision, all of them kept,
    # where the snapshot keeps only its last three, each listing at most eight lines.
    assert [r["revision"] for r in records] == list(range(1, ROOTS + 1))
    assert len(head["snapshot"]["compactions"]) == 3
    assert max(len(r["dropped"]) for r in records) > 8
    for record in records:
        revision = record["revision"]
        assert len(record["dropped"]) == record["droppedCount"]
        before = context(d, thread_id, revision - 1)["snapshot"]
        after = context(d, thread_id, revision)["snapshot"]
        dropped = {line["id"] for line in record["dropped"]}
        # Lines of the previous revision missing from this one are all accounted for;
        # the rest of what was dropped are this root's own pins that did not fit.
        assert line_ids(before) - line_ids(after) <= dropped
        assert not dropped & line_ids(after)
        assert {line["kind"] for line in record["dropped"]} <= {"decision", "outcome"}
        # The bounded copy in the snapshot is a prefix of the full record.
        assert after["compactions"][-1]["dropped"] == record["dropped"][:8]
    # Any revision serves the records up to itself.
    assert context(d, thread_id, 2)["compactions"] == records[:2]

    conn = sqlite3.connect(d.home / "alp.db", isolation_level=None)
    try:
        conn.execute("DROP TRIGGER compactions_no_update")
        # A line removed from the stored record (its count adjusted to match): the
        # snapshot's bounded copy no longer agrees.
        body = json.loads(
            conn.execute("SELECT body FROM compactions WHERE revision = 2").fetchone()[0]
        )
        body["dropped"] = body["dropped"][1:]
        body["droppedCount"] -= 1
        conn.execute(
            "UPDATE compactions SET body = ? WHERE revision = 2",
            (json.dumps(body, separators=(",", ":"), sort_keys=True).encode(),),
        )
    finally:
        conn.close()
    error = None
    try:
        context(d, thread_id)
    except Exception as exc:
        error = exc
    assert getattr(error, "name", None) == "THREAD_CONTEXT_TAMPERED"
