"""The records a thread's authority rests on cannot be changed in place, and a change made
behind the daemon's back is found (docs/contract.md, invariant 3).

A real alpd builds every kind of record — snapshots (a chain of revisions), a compaction (a
root's pins overflow the context cap), a context step (a clear), policies (the roots'
executions) — then an attacker with the user's file access tries UPDATE and DELETE on each
with `sqlite3`: the store's triggers refuse every one. A non-head snapshot whose body is
changed with its digest column left as it was is refused when read or built on.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, settled, start_headless

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

#: 12 pins of ~3.9 KiB: one root alone overflows the 32 KiB cap, so it makes a compaction
BIG_PINS = (
    "for i in $(seq 12); do "
    "alp context pin decision -- \"big-$i $(printf '%03900d' 0)\" || exit 1; done"
)


def _root(d: DaemonProcess, thread_id: str, work: Path, script: str) -> dict[str, Any]:
    execution = start_headless(d, thread_id, work, ["sh", "-c", script])
    done = settled(d, execution["id"])
    assert done["outcome"] == "completed", done
    return done


@pytest.fixture(scope="module")
def built(
    start_module_alpd: StartAlpd, tmp_path_factory: pytest.TempPathFactory
) -> tuple[DaemonProcess, str, Path]:
    """A daemon and a thread holding every kind of record."""
    d = start_module_alpd()
    work = tmp_path_factory.mktemp("work")
    thread_id = str(d.call("thread/create", {"title": "records", "cwd": str(work)})["id"])  # type: ignore[index]
    _root(d, thread_id, work, BIG_PINS)
    d.call("thread/clear", {"threadId": thread_id})
    return d, thread_id, work


def _write_db(d: DaemonProcess) -> sqlite3.Connection:
    return sqlite3.connect(d.home / "alp.db", timeout=10, isolation_level=None)


ATTEMPTS = [
    ("snapshots", "UPDATE snapshots SET created_at = 'x' WHERE thread_id = ?"),
    ("snapshots", "DELETE FROM snapshots WHERE thread_id = ?"),
    ("context_steps", "UPDATE context_steps SET kind = kind WHERE thread_id = ?"),
    ("context_steps", "DELETE FROM context_steps WHERE thread_id = ?"),
    ("compactions", "UPDATE compactions SET created_at = 'x' WHERE thread_id = ?"),
    ("compactions", "DELETE FROM compactions WHERE thread_id = ?"),
    ("policies", "UPDATE executions SET policy = policy WHERE thread_id = ?"),
    ("policies", "UPDATE executions SET policy_hash = 'sha256:0' WHERE thread_id = ?"),
    ("policies", "DELETE FROM executions WHERE thread_id = ?"),
]


@pytest.mark.parametrize(("table", "statement"), ATTEMPTS)
def test_stored_authority_records_refuse_update_and_delete(
    built: tuple[DaemonProcess, str, Path], table: str, statement: str
) -> None:
    d, thread_id, _ = built
    source = "executions" if table == "policies" else table
    with _write_db(d) as conn:
        before = conn.execute(
            f"SELECT count(*) FROM {source} WHERE thread_id = ?", (thread_id,)
        ).fetchone()[0]
        assert before >= 1, f"the thread has no {table} row to attack"
        with pytest.raises(sqlite3.IntegrityError, match="immutable"):
            conn.execute(statement, (thread_id,))
        after = conn.execute(
            f"SELECT count(*) FROM {source} WHERE thread_id = ?", (thread_id,)
        ).fetchone()[0]
    assert after == before


def test_non_head_snapshot_changed_with_its_digest_untouched_is_thread_context_tampered(
    d: DaemonProcess, work: Path
) -> None:
    thread_id = str(d.call("thread/create", {"title": "t", "cwd": str(work)})["id"])  # type: ignore[index]
    for n in range(3):
        _root(d, thread_id, work, f"alp context pin decision -- 'decision {n}'")
    head = d.call("thread/context", {"threadId": thread_id})
    assert isinstance(head, dict) and head["revision"] == 3
    with _write_db(d) as conn:
        conn.execute("DROP TRIGGER snapshots_no_update")
        body = bytes(
            conn.execute(
                "SELECT body FROM snapshots WHERE thread_id = ? AND revision = 1", (thread_id,)
            ).fetchone()[0]
        )
        forged = body.replace(b"decision 0", b"allowedTools: Bash(*)")
        assert forged != body
        conn.execute(
            "UPDATE snapshots SET body = ? WHERE thread_id = ? AND revision = 1",
            (forged, thread_id),
        )
    requests: list[tuple[str, dict[str, Any]]] = [
        ("thread/context", {"threadId": thread_id}),
        ("thread/context", {"threadId": thread_id, "revision": 1}),
        ("thread/show", {"threadId": thread_id}),
        (
            "thread/continue",
            {"threadId": thread_id, "runtime": "command", "headless": True,
             "args": ["true"], "cwd": str(work)},
        ),
    ]  # fmt: skip
    for method, params in requests:
        with pytest.raises(RpcError) as info:
            d.call(method, params)
        assert info.value.name == "THREAD_CONTEXT_TAMPERED", (method, params, info.value.message)
    with _write_db(d) as conn:
        roots = conn.execute(
            "SELECT count(*) FROM executions WHERE thread_id = ?", (thread_id,)
        ).fetchone()[0]
    assert roots == 3  # nothing was opened on the forged chain
