"""The memory section a new root is given, and the record of it.

Inside the unit that reserves the root (`alpd.services.runs.reserve`): unless `[memory]
max_bytes` is 0 or the root's agent says `memory = false` (or `memory_max_bytes = 0`; a
nonzero one is its cap in place of `[memory] max_bytes`), the thread's words (title,
objective, pins, the last outcomes' summaries and the new root's prompt: `query_terms`) pick
bounded candidates from the store (`alpd.store.memory.choose_candidates`, one hop: the best
full-text matches by relevance, and the newest), the domain ranks and caps them
(`alpd.domain.memory.selection`), and each chosen memory's chain is verified (a chain read
unchanged since it was last verified is not hashed again: `VERIFIED_CHAINS`,
`alpd.domain.verified_reads`). A memory whose
chain no longer verifies is left out (and logged as `memory_tampered`): one rewritten row
must not stop every thread of the workspace from starting, and what it says can no longer be
trusted; `alp memory show` names it MEMORY_TAMPERED. The root records which versions it was
given and a digest of them (`root_memories`, immutable), even when none were.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import structlog

from alpd.domain.canonical import digest_of
from alpd.domain.memory.record import MemoryVersion, verify_chain
from alpd.domain.memory.selection import Candidate, Chosen, query_terms, select_memories
from alpd.domain.memory.settings import MemorySettings
from alpd.domain.runs.agents import AgentDefinition
from alpd.domain.threads.context import Snapshot
from alpd.domain.verified_reads import VerifiedReads
from alpd.errors import MemoryTampered
from alpd.store import memory as memories
from alpd.store.db import Tx

log = structlog.get_logger("alpd.memory")

Chain = list[tuple[MemoryVersion, str]]
ChainRead = tuple[tuple[MemoryVersion, str], ...]

#: outcomes whose summaries count as the thread's recent activity
RECENT_OUTCOMES = 3
#: characters of verified chains remembered (each version counted as its text and 300 for
#: the rest): a few thousand memories' worth
VERIFIED_CHAINS_WEIGHT = 4 << 20


@dataclass(frozen=True, slots=True)
class GivenMemory:
    """The section (empty: none) and the versions it holds, (id, version, digest)."""

    text: str
    versions: tuple[tuple[str, int, str], ...]
    enabled: bool


def thread_words(snapshot: Snapshot, title: str | None, prompt: str | None) -> tuple[str, ...]:
    """What the thread is about, as query words: objective, pins, recent activity."""
    texts: list[str] = [title or ""]
    if snapshot.objective is not None:
        texts.append(snapshot.objective.text)
    for lines in (
        snapshot.next_actions,
        snapshot.open_items,
        snapshot.constraints,
        snapshot.decisions,
    ):
        texts += [line.text for line in lines]
    texts += [o.summary or "" for o in snapshot.outcomes[-RECENT_OUTCOMES:]]
    # The prompt first: what this root is asked is the most recent activity of all.
    return query_terms([prompt or "", *texts])


async def memory_for_root(
    tx: Tx,
    *,
    owner_uid: int,
    workspace: str,
    words: tuple[str, ...],
    agent: AgentDefinition,
    settings: MemorySettings,
    now: str,
) -> GivenMemory:
    """The memory section for a new root (module docstring)."""
    cap = settings.max_bytes if agent.memory_max_bytes is None else agent.memory_max_bytes
    if settings.max_bytes <= 0 or not agent.memory or cap <= 0:
        return GivenMemory("", (), enabled=False)
    excluded: set[str] = set()
    while True:
        chosen: Chosen = Chosen((), "")

        def choose(
            pool: list[Candidate], skip: frozenset[str] = frozenset(excluded)
        ) -> tuple[Candidate, ...]:
            nonlocal chosen
            kept = [c for c in pool if c.memory_id not in skip]
            chosen = select_memories(kept, max_bytes=cap, now=now)
            return chosen.memories

        picked, chains = await memories.choose_candidates(tx, owner_uid, workspace, words, choose)
        broken = _tampered(picked, chains)
        if not broken:
            break
        excluded |= broken
    versions = tuple((c.memory_id, c.version, c.digest) for c in chosen.memories)
    return GivenMemory(chosen.text, versions, enabled=True)


def _verify(chain: ChainRead) -> str:
    return verify_chain([v for v, _ in chain], [d for _, d in chain])


def _chain_weight(chain: ChainRead) -> int:
    return sum(len(version.text) + 300 for version, _ in chain)


#: `verify_chain`, remembered per memory by the whole of what was read (every field of every
#: version and its stored digest): the same memories given to root after root are not hashed
#: again; a chain changed in any way is verified afresh, and a failure is not kept
VERIFIED_CHAINS: VerifiedReads[str, ChainRead, str] = VerifiedReads(
    _verify, _chain_weight, VERIFIED_CHAINS_WEIGHT
)


def _tampered(chosen: Iterable[Candidate], chains: dict[str, Chain]) -> set[str]:
    """The chosen memories whose chain does not verify up to the version chosen."""
    broken: set[str] = set()
    for candidate in chosen:
        chain = chains.get(candidate.memory_id, [])
        try:
            head = VERIFIED_CHAINS(candidate.memory_id, tuple(chain))
            if head != candidate.digest or chain[-1][0].text != candidate.text:
                raise MemoryTampered(memoryId=candidate.memory_id)
        except MemoryTampered:
            log.warning("memory_tampered", memory_id=candidate.memory_id)
            broken.add(candidate.memory_id)
    return broken


async def record_given(tx: Tx, execution_id: str, given: GivenMemory) -> None:
    """What memory versions the root was given, recorded with it (immutable)."""
    if not given.enabled:
        return
    pairs = [(memory_id, version) for memory_id, version, _ in given.versions]
    await memories.insert_root_memories(
        tx,
        execution_id,
        pairs,
        digest_of([list(v) for v in given.versions]),
        len(given.text.encode("utf-8", "surrogatepass")),
    )


__all__ = ["GivenMemory", "memory_for_root", "record_given", "thread_words"]
