"""Keys that are each person's on one PostgreSQL database (issue 24, point 5;
docs/many-machines.md, "One person across hosts"): alice and bob, each with their own alpd and
their own bot, pair the same Telegram user and talk to their own thread from the same chat,
and import the very same native session — both succeed, and neither sees the other's. A
channel's seen keys (a WeCom message id) and poll cursor are each person's too.

Before the chat keys carried the person (migration 34), bob's pairing of a sender alice had
paired met her row under the key `(channel, sender)`: invisible to him, and a write refused
by row-level security, so he was never told "Paired".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from daemons import roots
from fake_telegram import FakeBotApi, fake_bot_api
from person_roles import shared_database, start
from polling import wait_for
from postgres_cluster import Cluster, as_role
from transcripts import Claude

from alpd.store import channels
from alpd.store.db import Tx
from alpd.store.postgres.store import PostgresStore
from alpd.testing.daemon import DaemonProcess
from tests.integration.channels.telegram_setup import config, token_file

pytestmark = pytest.mark.postgres

#: the Telegram user (and chat) both persons pair: one person's phone, say, in two households
USER = 4242


@pytest.fixture
def database(postgres_cluster: Cluster) -> Iterator[str]:
    yield from shared_database(postgres_cluster)


def call(d: DaemonProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = d.call(method, params)
    assert isinstance(result, dict)
    return result


def telegram(base: Path, api: FakeBotApi) -> str:
    base.mkdir()
    return config(token_file(base, api.token), api)


def telegram_state(d: DaemonProcess) -> dict[str, Any]:
    listed = call(d, "channel/list", {})
    return next(c for c in listed["channels"] if c["channel"] == "telegram")


def pair_and_talk(d: DaemonProcess, api: FakeBotApi, title: str, work: Path) -> str:
    """The person's thread `title` (a first root of `echo`), USER paired with this alpd and
    the chat switched to that thread, then a chat turn answered; the thread's id."""
    wait_for(lambda: telegram_state(d)["state"] == "polling", what="the bot to poll")
    thread = call(d, "thread/create", {"title": title, "cwd": str(work)})
    first = call(
        d,
        "thread/continue",
        {"threadId": thread["id"], "agent": "echo", "headless": True, "cwd": str(work)},
    )
    d.call("execution/wait", {"executionId": first["execution"]["id"], "timeout": 30})
    api.user_says(USER, str(call(d, "channel/pair", {"channel": "telegram"})["code"]))
    api.wait_sent(lambda s: s["chat_id"] == USER and "Paired" in s["text"])
    api.user_says(USER, f"/use {title}")
    api.wait_sent(lambda s: s["chat_id"] == USER and f"▶ {title}" in s["text"])
    api.user_says(USER, "what is the disk usage?")
    api.wait_sent(lambda s: s["chat_id"] == USER and "ANSWER-" in s["text"])
    return str(thread["id"])


def import_session(d: DaemonProcess, claude: Claude, session: bytes) -> dict[str, Any]:
    """`session` (claude's lines) imported from a directory of `d`'s own."""
    sessions = d.home.parent / "claude"
    sessions.mkdir()
    (sessions / f"{claude.session}.jsonl").write_bytes(session)
    return call(d, "history/import", {"runtime": "claude", "path": str(sessions)})


def giraffe_executions(d: DaemonProcess) -> set[str]:
    hits = call(d, "history/search", {"query": "giraffe"})["hits"]
    assert len(hits) == 2  # the prompt and the reply, once: never the other person's copy
    return {h["executionId"] for h in hits}


def channel_rows(url: str) -> dict[str, list[tuple[Any, ...]]]:
    """What a role reads of the chat tables with its own `psql`."""
    with psycopg.connect(url, autocommit=True) as conn:
        return {
            "senders": conn.execute("SELECT channel, sender FROM channel_senders").fetchall(),
            "chats": conn.execute("SELECT chat, thread_id FROM channel_chats").fetchall(),
        }


def test_two_persons_pair_the_same_chat_and_import_the_same_session(
    database: str, tmp_path: Path
) -> None:
    claude = Claude()
    session = claude.prompt("giraffe feeding times", ts="2026-11-01T10:00:00.000Z") + (
        claude.reply("the giraffe eats at noon", ts="2026-11-01T10:01:00.000Z")
    )
    work = tmp_path / "work"
    work.mkdir()
    with (
        fake_bot_api(f"111:{'a' * 30}") as alices_bot,
        fake_bot_api(f"222:{'b' * 30}") as bobs_bot,
        start(
            tmp_path / "alice",
            as_role(database, "alice"),
            "alice",
            telegram(tmp_path / "alice-bot", alices_bot),
        ) as alice,
        start(
            tmp_path / "bob",
            as_role(database, "bob"),
            "bob",
            telegram(tmp_path / "bob-bot", bobs_bot),
        ) as bob,
    ):
        hers = pair_and_talk(alice, alices_bot, "alice-ops", work)
        his = pair_and_talk(bob, bobs_bot, "bob-ops", work)
        for d, mine in ((alice, hers), (bob, his)):
            senders = telegram_state(d)["senders"]
            assert [s["sender"] for s in senders] == [str(USER)]
            chat_turn = roots(d, mine)[-1]
            assert chat_turn["origin"] == {"door": "telegram", "by": f"telegram:{USER}"}
            assert len(roots(d, mine)) == 2
        # alice's chat still talks to her thread after bob paired the same user
        alices_bot.user_says(USER, "and now?")
        wait_for(lambda: len(roots(alice, hers)) == 3, what="alice's second chat turn")
        assert len(roots(bob, his)) == 2

        imported = [import_session(d, claude, session) for d in (alice, bob)]
        assert [i["imported"] for i in imported] == [1, 1]
        wait_for(lambda: len(call(bob, "history/search", {"query": "giraffe"})["hits"]) == 2)
        wait_for(lambda: len(call(alice, "history/search", {"query": "giraffe"})["hits"]) == 2)
        assert giraffe_executions(alice).isdisjoint(giraffe_executions(bob))

    for role, mine in (("alice", hers), ("bob", his)):
        seen = channel_rows(as_role(database, role))
        assert seen == {"senders": [("telegram", str(USER))], "chats": [(str(USER), mine)]}


def test_a_seen_message_and_a_poll_cursor_are_each_persons(database: str) -> None:
    """The same message id seen by alice is new to bob; their cursors on an account of the
    same name move apart (before migration 34: bob's id taken as seen, his cursor refused)."""

    async def as_person(role: str, offset: int) -> tuple[bool, int | None]:
        store = await PostgresStore.connect(as_role(database, role))
        try:

            async def unit(tx: Tx) -> bool:
                await channels.set_poll_cursor(tx, "telegram", "account", offset)
                return await channels.mark_seen(tx, "wechat", "msg-1", 2e9, 1e9, 100)

            new = await store.write(unit)
            return new, await channels.poll_cursor(store, "telegram", "account")
        finally:
            await store.close()

    assert anyio.run(as_person, "alice", 10) == (True, 10)
    assert anyio.run(as_person, "bob", 3) == (True, 3)
    assert anyio.run(as_person, "alice", 5) == (False, 10)  # hers: seen, and never rewound
