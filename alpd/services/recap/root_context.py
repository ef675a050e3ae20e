"""What a new root is given besides its pinned context, and the record of it.

In the order they follow the pinned snapshot in `session-context.md`:

1. the thread's recap (`alpd.domain.threads.session_context.render_recap_section`), when one was
   made and still stands (no clear since, no undo of a root it read), recaps are enabled in
   config.toml and the root's agent does not turn them off (`recap = false`);
2. the verbatim tail of the last exchange: the prompts and replies of the newest root whose
   entries a recap may read (`readable_entries`, so never a cleared or undone exchange),
   secret-filtered again and cut from the start to `[recap] tailChars` (0: no tail); the
   same agent switch and `[recap] enabled = false` turn it off;
3. whatever the caller appends (the envelope of a delivery that woke the root).

None of it is part of the digest chain. The root records, in the transaction that reserves
it (`root_derived`), the recap's source revision, when it was made and its digest, the root
the tail came from, and a digest and size of all the derived text it was given, so a run
can be audited against what it read.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Final

import aiosqlite
import msgspec

from alpd.domain.canonical import sha256_digest
from alpd.domain.recap.config import RecapSettings
from alpd.domain.recap.summary import RecapEntry
from alpd.domain.runs.agents import AgentDefinition
from alpd.domain.secrets.filter import redact
from alpd.domain.threads.session_context import render_recap_section, render_tail_section
from alpd.services.recap.entries import STANDS, readable_entries
from alpd.store.db import Store

#: entries read to find the last exchange's end
TAIL_ENTRIES: Final = 40
_CUT: Final = "[…] "


@dataclass(frozen=True, slots=True)
class Derived:
    text: str
    recap_revision: int | None = None
    recap_made_at: str | None = None
    recap_digest: str | None = None
    tail_from: str | None = None


async def derived_context(
    conn: aiosqlite.Connection,
    store: Store,
    thread_id: str,
    agent: AgentDefinition,
    settings: RecapSettings,
    addendum: str | None,
) -> Derived:
    """The derived sections for a new root of the thread (module docstring)."""
    sections: list[str] = []
    derived = Derived(text="")
    if agent.recap and settings.enabled:
        async with conn.execute(
            f"SELECT * FROM recaps r WHERE r.thread_id = ? AND {STANDS}", (thread_id,)
        ) as cursor:
            row = await cursor.fetchone()
        if row is not None:
            tasks = msgspec.json.decode(row["open_tasks"], type=list[str])
            sections.append(
                render_recap_section(
                    row["headline"],
                    row["gist"],
                    tasks,
                    source_revision=row["source_revision"],
                    made_at=row["made_at"],
                )
            )
            derived = replace(
                derived,
                recap_revision=row["source_revision"],
                recap_made_at=row["made_at"],
                recap_digest=row["digest"],
            )
    if agent.recap and settings.enabled and settings.tail_chars > 0:
        entries = await readable_entries(store, thread_id, 0, TAIL_ENTRIES)
        tail = last_exchange(entries, settings.tail_chars)
        if tail:
            sequence = entries[-1].sequence
            sections.append(render_tail_section(tail, sequence=sequence))
            derived = replace(derived, tail_from=await _root_of(conn, thread_id, sequence))
    if addendum:
        sections.append(addendum)
    return replace(derived, text="".join("\n" + section for section in sections))


def last_exchange(entries: list[RecapEntry], limit: int) -> list[tuple[str, str]]:
    """The prompts and replies of the newest root among `entries`, newest kept within
    `limit` characters (the oldest kept one cut from its start)."""
    if not entries:
        return []
    newest = entries[-1].sequence
    said = [
        (entry.role, redact(entry.text).text)
        for entry in entries
        if entry.sequence == newest and entry.kind in ("prompt", "reply") and entry.text
    ]
    kept: list[tuple[str, str]] = []
    budget = limit
    for role, text in reversed(said):
        if budget <= 0:
            break
        if len(text) > budget:
            text = _CUT + text[len(text) - budget + len(_CUT) :] if budget > len(_CUT) else ""
        if text:
            kept.append((role, text))
        budget -= len(text)
    return kept[::-1]


async def record_derived(conn: aiosqlite.Connection, execution_id: str, derived: Derived) -> None:
    """What the root was given, recorded with the root (immutable)."""
    await conn.execute(
        "INSERT INTO root_derived (execution_id, recap_revision, recap_made_at, recap_digest, "
        "tail_from, digest, chars) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            execution_id,
            derived.recap_revision,
            derived.recap_made_at,
            derived.recap_digest,
            derived.tail_from,
            sha256_digest(derived.text.encode("utf-8", "surrogatepass")),
            len(derived.text),
        ),
    )


async def _root_of(conn: aiosqlite.Connection, thread_id: str, sequence: int | None) -> str | None:
    async with conn.execute(
        "SELECT id FROM executions WHERE thread_id = ? AND is_root = 1 AND sequence = ?",
        (thread_id, sequence),
    ) as cursor:
        row = await cursor.fetchone()
    return None if row is None else str(row["id"])


__all__ = ["Derived", "derived_context", "last_exchange", "record_derived"]
