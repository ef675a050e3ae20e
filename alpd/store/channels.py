"""SQL over the chat doors' state (migrations V22, V26, V29): poll cursors, paired senders,
each chat's thread, the one-time nonces of approval buttons, the threads muted for notices,
and what a channel has seen (a callback's nonce, a message id) kept across restarts.

The channels service (`alpd.services.channels`) decides; these functions say what is read
or written. A nonce is answered at most once (`answer_prompt` updates only an unanswered
row), so a button pressed twice, or pressed after its request expired, does nothing.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from alpd.store.db import Store, Tx

__all__ = [
    "MuteRow",
    "PromptRow",
    "SenderRow",
    "answer_prompt",
    "chat_thread",
    "delete_sender",
    "insert_prompt",
    "mark_seen",
    "mute_thread",
    "muted_kinds",
    "mutes",
    "poll_cursor",
    "prompt_for",
    "senders",
    "set_chat_thread",
    "set_poll_cursor",
    "set_prompt_message",
    "unmute_thread",
    "upsert_sender",
]


@dataclass(frozen=True, slots=True)
class SenderRow:
    channel: str
    sender: str
    owner_uid: int
    chat: str
    name: str | None
    paired_at: str


@dataclass(frozen=True, slots=True)
class PromptRow:
    nonce: str
    channel: str
    chat: str
    message: str | None
    subject: str
    subject_id: str
    answer: str | None


async def poll_cursor(store: Store, channel: str, account: str) -> int | None:
    """The next update a channel's poll asks for (None: never polled)."""
    row = await store.fetchone(
        "SELECT next_offset FROM channel_cursors WHERE channel = ? AND account = ?",
        (channel, account),
    )
    return None if row is None else int(row["next_offset"])


async def set_poll_cursor(tx: Tx, channel: str, account: str, next_offset: int) -> None:
    """Move the cursor forward (never back: an older poll's answer cannot rewind it)."""
    await tx.execute(
        "INSERT INTO channel_cursors (channel, account, next_offset) VALUES (?, ?, ?) "
        "ON CONFLICT (channel, account) DO UPDATE SET next_offset = "
        "max(channel_cursors.next_offset, excluded.next_offset)",
        (channel, account, next_offset),
    )


async def senders(store: Store, channel: str | None = None) -> list[SenderRow]:
    rows = await store.fetchall(
        "SELECT channel, sender, owner_uid, chat, name, paired_at FROM channel_senders "
        "WHERE ? IS NULL OR channel = ? ORDER BY channel, paired_at",
        (channel, channel),
    )
    return [
        SenderRow(r["channel"], r["sender"], r["owner_uid"], r["chat"], r["name"], r["paired_at"])
        for r in rows
    ]


async def upsert_sender(tx: Tx, row: SenderRow) -> None:
    await tx.execute(
        "INSERT INTO channel_senders (channel, sender, owner_uid, chat, name, paired_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (channel, sender) DO UPDATE SET "
        "owner_uid = excluded.owner_uid, chat = excluded.chat, name = excluded.name, "
        "paired_at = excluded.paired_at",
        (row.channel, row.sender, row.owner_uid, row.chat, row.name, row.paired_at),
    )


async def delete_sender(tx: Tx, channel: str, sender: str) -> bool:
    async with tx.execute(
        "DELETE FROM channel_senders WHERE channel = ? AND sender = ?", (channel, sender)
    ) as cur:
        return cur.rowcount > 0


async def chat_thread(store: Store, channel: str, chat: str) -> str | None:
    row = await store.fetchone(
        "SELECT thread_id FROM channel_chats WHERE channel = ? AND chat = ?", (channel, chat)
    )
    return None if row is None else row["thread_id"]


async def set_chat_thread(tx: Tx, channel: str, chat: str, thread_id: str, at: str) -> None:
    await tx.execute(
        "INSERT INTO channel_chats (channel, chat, thread_id, updated_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (channel, chat) DO UPDATE SET thread_id = excluded.thread_id, "
        "updated_at = excluded.updated_at",
        (channel, chat, thread_id, at),
    )


async def insert_prompt(
    tx: Tx, *, nonce: str, channel: str, chat: str, subject: str, subject_id: str, at: str
) -> None:
    await tx.execute(
        "INSERT INTO channel_prompts (nonce, channel, chat, subject, subject_id, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (nonce, channel, chat, subject, subject_id, at),
    )


async def set_prompt_message(tx: Tx, nonce: str, message: str) -> None:
    await tx.execute("UPDATE channel_prompts SET message = ? WHERE nonce = ?", (message, nonce))


async def prompt_for(store: Store, subject: str, subject_id: str) -> list[PromptRow]:
    """The prompts sent about one subject (an inbox item, a permission request)."""
    rows = await store.fetchall(
        "SELECT nonce, channel, chat, message, subject, subject_id, answer FROM channel_prompts "
        "WHERE subject = ? AND subject_id = ?",
        (subject, subject_id),
    )
    return [_prompt(r) for r in rows]


async def answer_prompt(tx: Tx, nonce: str, answer: str, at: str) -> PromptRow | None:
    """Record the answer of an unanswered prompt; None when the nonce is unknown or was
    answered already (a one-time nonce)."""
    async with tx.execute(
        "UPDATE channel_prompts SET answer = ?, answered_at = ? "
        "WHERE nonce = ? AND answered_at IS NULL "
        "RETURNING nonce, channel, chat, message, subject, subject_id, answer",
        (answer, at, nonce),
    ) as cur:
        row = await cur.fetchone()
    return None if row is None else _prompt(row)


def _prompt(r: sqlite3.Row) -> PromptRow:
    return PromptRow(
        r["nonce"],
        r["channel"],
        r["chat"],
        r["message"],
        r["subject"],
        r["subject_id"],
        r["answer"],
    )


@dataclass(frozen=True, slots=True)
class MuteRow:
    thread_id: str
    thread_title: str | None
    kinds: tuple[str, ...]


async def mute_thread(tx: Tx, thread_id: str, kinds: tuple[str, ...], at: str) -> None:
    await tx.executemany(
        "INSERT INTO channel_mutes (thread_id, kind, muted_at) VALUES (?, ?, ?) "
        "ON CONFLICT (thread_id, kind) DO NOTHING",
        [(thread_id, kind, at) for kind in kinds],
    )


async def unmute_thread(tx: Tx, thread_id: str, kinds: tuple[str, ...]) -> None:
    await tx.executemany(
        "DELETE FROM channel_mutes WHERE thread_id = ? AND kind = ?",
        [(thread_id, kind) for kind in kinds],
    )


async def muted_kinds(store: Store, thread_id: str) -> tuple[str, ...]:
    """The notice kinds no chat is sent for this thread."""
    rows = await store.fetchall(
        "SELECT kind FROM channel_mutes WHERE thread_id = ? ORDER BY kind", (thread_id,)
    )
    return tuple(r["kind"] for r in rows)


async def mutes(store: Store, owner_uid: int, limit: int) -> list[MuteRow]:
    """The owner's muted threads, most recently muted first."""
    rows = await store.fetchall(
        "SELECT m.thread_id, t.title, group_concat(m.kind) AS kinds, max(m.muted_at) AS at "
        "FROM channel_mutes m JOIN threads t ON t.id = m.thread_id WHERE t.owner_uid = ? "
        "GROUP BY m.thread_id, t.title ORDER BY at DESC LIMIT ?",
        (owner_uid, limit),
    )
    return [MuteRow(r["thread_id"], r["title"], tuple(sorted(r["kinds"].split(",")))) for r in rows]


async def mark_seen(tx: Tx, channel: str, key: str, until: float, now: float, most: int) -> bool:
    """Whether `key` is new to `channel` (then it is kept until `until`): what expired is
    forgotten first, and beyond `most` keys the ones to be forgotten soonest go."""
    await tx.execute("DELETE FROM channel_seen WHERE channel = ? AND until < ?", (channel, now))
    async with tx.execute(
        "INSERT INTO channel_seen (channel, key, until) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
        (channel, key, until),
    ) as cursor:
        new = cursor.rowcount == 1
    if new:
        await tx.execute(
            "DELETE FROM channel_seen WHERE channel = ? AND key IN (SELECT key FROM channel_seen "
            "WHERE channel = ? ORDER BY until DESC, key LIMIT -1 OFFSET ?)",
            (channel, channel, most),
        )
    return new
