"""`thread/transcript` checks every entry it shows against its digest, and only those: an
entry edited in the database outside alpd is HISTORY_ENTRY_TAMPERED on the pages that show
it (a tool result shown inside its call included), and does not stop the pages that do not
(a result hidden because its call, on the page before, shows it). alpd remembers the entries
it verified with every column it read: every edit below comes after the entry was shown
(and so remembered), and a change to any column it reads is caught on the next page. A page
read again unchanged is the page made before (`TranscriptService.pages`), and any change
read makes a new one."""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from contextlib import closing
from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from alpctl.client import RpcError
from alpd.clock import Clock
from alpd.errors import HistoryEntryTampered
from alpd.events import EventBus
from alpd.services.context import Caller, Daemon
from alpd.services.history.transcript import TranscriptService
from alpd.store.db import Store
from alpd.testing.daemon import DaemonProcess
from protocol import messages as m

SESSION = "11111111-2222-4333-8444-555555555555"


def line(kind: str, content: Any, n: int) -> str:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message["model"] = "claude-test"
    at = f"2026-11-20T10:00:{n:02d}.000Z"
    return json.dumps(
        {"type": kind, "uuid": str(uuid.uuid4()), "sessionId": SESSION, "timestamp": at,
         "message": message}
    )  # fmt: skip


def session(directory: Path) -> None:
    """turn 1, reply 1, turn 2, a Bash call and its result, reply 2, turn 3, reply 3."""
    directory.mkdir()
    call = {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "make"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "all green"}
    lines = [
        line("user", "turn 1", 1),
        line("assistant", [{"type": "text", "text": "reply 1"}], 2),
        line("user", "turn 2", 3),
        line("assistant", [call], 4),
        line("user", [result], 5),
        line("assistant", [{"type": "text", "text": "reply 2"}], 6),
        line("user", "turn 3", 7),
        line("assistant", [{"type": "text", "text": "reply 3"}], 8),
    ]
    (directory / f"{SESSION}.jsonl").write_text("\n".join(lines) + "\n")


def page(d: DaemonProcess, tid: str, limit: int) -> list[dict[str, Any]]:
    result = d.call("thread/transcript", {"threadId": tid, "limit": limit})
    assert isinstance(result, dict)
    return list(result["items"])


def edit(d: DaemonProcess, sql: str, params: tuple[str, ...]) -> int:
    """A statement on the database behind alpd's back (the immutability trigger dropped)."""
    with closing(sqlite3.connect(d.home / "alp.db", timeout=10, isolation_level=None)) as conn:
        conn.execute("DROP TRIGGER IF EXISTS history_entries_immutable")
        return conn.execute(sql, params).rowcount


def tamper(d: DaemonProcess, text: str) -> None:
    changed = edit(
        d,
        "UPDATE history_entries SET text = text || ' (edited)', "
        "output_tail = CASE WHEN output_tail IS NULL THEN NULL ELSE output_tail || '!' END "
        "WHERE text = ? OR output_tail = ?",
        (text, text),
    )
    assert changed == 1, text


def adopted_thread(d: DaemonProcess, tmp_path: Path) -> str:
    """The session (`session`) imported and adopted: its thread's id."""
    session(tmp_path / "sessions")
    d.call("history/import", {"runtime": "claude", "path": str(tmp_path / "sessions")})
    adopted = d.call("thread/adopt", {"sessionId": SESSION})
    assert isinstance(adopted, dict)
    return str(adopted["threadId"])


def tampered(d: DaemonProcess, tid: str, limit: int) -> bool:
    try:
        page(d, tid, limit)
    except RpcError as exc:
        assert exc.name == "HISTORY_ENTRY_TAMPERED"
        return True
    return False


def test_only_the_entries_a_page_shows_are_re_hashed(d: DaemonProcess, tmp_path: Path) -> None:
    tid = adopted_thread(d, tmp_path)
    newest4 = page(d, tid, 4)
    assert [i.get("text") for i in newest4] == ["reply 2", "turn 3", "reply 3"]  # result hidden
    five = page(d, tid, 5)
    assert five[0]["type"] == "tool" and five[0]["tool"]["result"] == "all green"
    assert not tampered(d, tid, 50)

    tamper(d, "turn 1")
    assert not tampered(d, tid, 4)  # not on the newest page
    assert tampered(d, tid, 50)
    edit(d, "UPDATE history_entries SET text = 'turn 1' WHERE text = ?", ("turn 1 (edited)",))
    assert not tampered(d, tid, 50)

    tamper(d, "all green")
    assert not tampered(d, tid, 4)  # the result's call is on the page before: hidden here
    assert tampered(d, tid, 5)  # shown inside its call


@pytest.mark.parametrize(
    ("column", "value"),
    [("text", "'reply 3 (edited)'"), ("byte_offset", "byte_offset + 1"),
     ("model", "'another-model'"), ("digest", "'sha256:' || hex(zeroblob(32))")],
)  # fmt: skip
def test_an_entry_shown_before_is_caught_when_any_column_it_reads_changes(
    d: DaemonProcess, tmp_path: Path, column: str, value: str
) -> None:
    tid = adopted_thread(d, tmp_path)
    for _ in range(3):
        assert page(d, tid, 2)[-1]["text"] == "reply 3"
    with closing(sqlite3.connect(d.home / "alp.db")) as conn:
        entry_id, before = conn.execute(
            f"SELECT id, {column} FROM history_entries WHERE text = 'reply 3'"
        ).fetchone()
    where = f"WHERE id = {int(entry_id)}"
    assert edit(d, f"UPDATE history_entries SET {column} = {value} {where}", ()) == 1
    assert tampered(d, tid, 2)
    assert tampered(d, tid, 2)  # a failure is not remembered
    assert edit(d, f"UPDATE history_entries SET {column} = ? {where}", (before,)) == 1
    assert not tampered(d, tid, 2)


def test_a_page_read_again_unchanged_is_the_page_made_before(
    d: DaemonProcess, tmp_path: Path
) -> None:
    tid = adopted_thread(d, tmp_path)
    caller = Caller(uid=os.getuid(), gid=os.getgid(), pid=os.getpid())
    newest = m.TranscriptParams(thread_id=tid, limit=5)
    whole = msgspec.structs.replace(newest, full=True)

    async def read(service: TranscriptService, params: m.TranscriptParams) -> m.TranscriptResult:
        return await service.page(caller, params)

    async def main() -> None:
        store = await Store.open(d.home / "alp.db")
        try:
            service = TranscriptService(
                Daemon(store=store, events=EventBus(), clock=Clock(), uid=os.getuid())
            )
            first = await read(service, newest)
            assert await read(service, newest) is first
            assert await read(service, whole) is not first  # another page asked
            assert await read(service, whole) == first  # (nothing here is long)
            assert d.call("thread/clear", {"threadId": tid})
            cleared = await read(service, newest)
            assert cleared is not first
            assert cleared.items[-1].type == "clear"
            assert [i.labels for i in cleared.items if i.entry_id] == [["before-clear"]] * 3
            assert await read(service, newest) is cleared
            edit(d, "UPDATE history_entries SET model = 'another' WHERE text = 'reply 3'", ())
            with pytest.raises(HistoryEntryTampered):
                await read(service, newest)
        finally:
            await store.close()

    anyio.run(main)


def test_a_page_of_a_thread_with_no_entries_is_not_checked_at_all(d: DaemonProcess) -> None:
    tid = d.call("thread/create", {"title": "empty"})
    assert isinstance(tid, dict)
    assert [i["type"] for i in page(d, str(tid["id"]), 10)] == []


@pytest.fixture
def d(start_alpd: Any) -> DaemonProcess:
    daemon: DaemonProcess = start_alpd("")
    return daemon
