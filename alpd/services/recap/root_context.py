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

from alpd.domain.canonical import sha256_digest
from alpd.domain.recap.config import RecapSettings
from alpd.domain.recap.summary import RecapEntry
from alpd.domain.runs.agents import AgentDefinition
from alpd.domain.secrets.filter import redact
from alpd.domain.threads.session_context import render_recap_section, render_tail_section
from alpd.services.recap.entries import readable_entries
from alpd.store import recap as recaps
from alpd.store.db import Store, Tx

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
    tx: Tx,
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
        stored = await recaps.standing_recap(tx, thread_id)
        if stored is not None:
            sections.append(
                render_recap_section(
                    stored.recap.headline,
                    stored.recap.gist,
                    stored.recap.open_tasks,
                    source_revision=stored.source_revision,
                    made_at=stored.made_at,
                )
            )
            derived = replace(
                derived,
                recap_revision=stored.source_revision,
                recap_made_at=stored.made_at,
                recap_digest=stored.digest,
            )
    if agent.recap and settings.enabled and settings.tail_chars > 0:
        entries = await readable_entries(store, thread_id, 0, TAIL_ENTRIES)
        tail = last_exchange(entries, settings.tail_chars)
        if tail:
            sequence = entries[-1].sequence
            sections.append(render_tail_section(tail, sequence=sequence))
            tail_from = await recaps.root_at_sequence(tx, thread_id, sequence)
            derived = replace(derived, tail_from=tail_from)
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


async def record_derived(tx: Tx, execution_id: str, derived: Derived) -> None:
    """What the root was given, recorded with the root (immutable)."""
    await recaps.insert_root_derived(
        tx,
        execution_id,
        recap_revision=derived.recap_revision,
        recap_made_at=derived.recap_made_at,
        recap_digest=derived.recap_digest,
        tail_from=derived.tail_from,
        digest=sha256_digest(derived.text.encode("utf-8", "surrogatepass")),
        chars=len(derived.text),
    )


__all__ = ["Derived", "derived_context", "last_exchange", "record_derived"]
