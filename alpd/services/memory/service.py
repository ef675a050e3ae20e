"""What the person does with memories: add, promote a pin, list, show, supersede, retract,
review (and confirm); and the search a run or `alp search` reads them by.

Every write is the person's: asked from inside a run (`run_of_caller`), it is NOT_FROM_A_RUN
— a run proposes (`proposals`), never writes. Each write is one unit: the chain of the memory
it builds on is verified first (MEMORY_TAMPERED), then one new version is recorded
(`alpd.store.memory.write_version`). Retracting is the one write that accepts a memory whose
chain no longer verifies: it is how a tampered memory is taken out of use.

A memory's workspace is the one its writer is in (`params.workspace`, else the git top level of
`params.cwd`); a global memory has none. A cited file's sha256 is read in a worker thread
(a file on a slow disk must not hold the loop), at add and at each confirmation.
"""

from __future__ import annotations

import hashlib
from functools import partial
from typing import Final

import anyio
import msgspec
import structlog

from alpd.domain.memory.record import (
    MEMORY_PREFIX,
    MemoryKind,
    MemoryScope,
    MemoryVersion,
    Provenance,
    first_version,
    next_version,
    version_digest,
)
from alpd.domain.memory.selection import words
from alpd.errors import (
    InvalidArgument,
    MemoryNotFound,
    MemoryTampered,
    ThreadContextTampered,
    ThreadNotFound,
)
from alpd.services.context import Caller, Daemon
from alpd.services.memory.citations import check_entries, entries_of
from alpd.services.memory.views import (
    Chain,
    load_verified,
    memory_of,
    pick_line,
    pinned_lines,
    verified,
    versions_of_chain,
)
from alpd.services.runs.callers import refuse_runs
from alpd.services.threads.lifecycle import check_owner
from alpd.services.threads.refs import resolve_thread
from alpd.services.threads.snapshots import load_chain, load_snapshot
from alpd.store import memory as memories
from alpd.store.db import Tx
from alpd.store.threads.shell import load_thread
from alpd.workspace import workspace_of
from protocol import messages as m

log = structlog.get_logger("alpd.memory")

#: memories `alp search` shows beside the history's hits
SEARCH_HITS: Final = 5
DAY_SECONDS: Final = 86_400
#: a pin's kind → the kind of memory it becomes unless the person says otherwise
KIND_OF_PIN: Final[dict[str, MemoryKind]] = {"constraint": "convention"}


def file_sha256(path: str) -> str | None:
    """The sha256 of a regular file's content; None when it is gone or unreadable."""
    digest = hashlib.sha256()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
    except OSError:
        return None
    return digest.hexdigest()


async def _sha_of(path: str) -> str | None:
    return await anyio.to_thread.run_sync(file_sha256, path)


class MemoryService:
    def __init__(self, daemon: Daemon) -> None:
        self.d = daemon

    async def _person(self, caller: Caller, what: str) -> None:
        await refuse_runs(self.d.store, caller, f"{what} (memory is the person's to write)")

    def _workspace(self, workspace: str | None, cwd: str | None) -> str:
        return workspace or workspace_of(cwd or "/")

    async def _write(self, version: MemoryVersion) -> m.Memory:
        async def unit(tx: Tx) -> m.Memory:
            await memories.write_version(tx, version, version_digest(version))
            head = await memories.head_of(tx, version.memory_id, version.owner_uid)
            assert head is not None
            return memory_of(head)

        return await self.d.store.write(unit)

    async def create(
        self,
        caller: Caller,
        *,
        text: str,
        kind: MemoryKind,
        scope: MemoryScope,
        workspace: str,
        provenance: Provenance,
    ) -> m.Memory:
        """A new memory (version 1); the caller has checked who may write it."""
        if provenance.file_path is not None and provenance.file_sha256 is None:
            sha = await _sha_of(provenance.file_path)
            if sha is None:
                raise InvalidArgument(
                    f"cannot read {provenance.file_path!r} to cite it: a cited file must exist",
                    field="file",
                )
            provenance = msgspec.structs.replace(provenance, file_sha256=sha)
        version = first_version(
            memory_id=self.d.clock.new_id(MEMORY_PREFIX),
            owner_uid=caller.uid,
            kind=kind,
            scope=scope,
            workspace=workspace,
            text=text,
            provenance=provenance,
            at=self.d.clock.now_iso(),
        )
        memory = await self._write(version)
        log.info("memory_added", memory_id=memory.id, door=provenance.door, kind=kind)
        return memory

    async def add(self, caller: Caller, params: m.MemoryAddParams, door: str) -> m.Memory:
        await self._person(caller, "add a memory")
        entries = tuple(sorted(set(params.entries)))
        if entries:
            await self.d.store.write(partial(check_entries, ids=entries, owner_uid=caller.uid))
        return await self.create(
            caller,
            text=params.text,
            kind=params.kind,
            scope=params.scope,
            workspace=self._workspace(params.workspace, params.cwd),
            provenance=Provenance(
                by=f"uid:{caller.uid}", door=door, file_path=params.file, history_entry_ids=entries
            ),
        )

    async def promote(self, caller: Caller, params: m.MemoryPromoteParams, door: str) -> m.Memory:
        """A pinned line of the thread's current context becomes a memory citing it."""
        await self._person(caller, "promote a pin to memory")
        named = await resolve_thread(self.d.store, caller, params.thread)

        async def unit(tx: Tx) -> tuple[str, Provenance, str, str]:
            thread = await load_thread(tx, named.id)
            check_owner(thread, caller)
            snapshot, _ = await load_chain(tx, thread.id, thread.context_revision)
            kind, line = pick_line(snapshot, params.pin)
            provenance = Provenance(
                by=f"uid:{caller.uid}",
                door=door,
                thread_id=thread.id,
                thread_title=thread.title,
                context_revision=snapshot.revision,
                line_id=line.id,
                line_kind=kind,
                execution_id=line.source_execution_id,
            )
            return line.text, provenance, kind, thread.workspace

        text, provenance, pin_kind, workspace = await self.d.store.write(unit)
        return await self.create(
            caller,
            text=text,
            kind=params.kind or KIND_OF_PIN.get(pin_kind, "fact"),
            scope=params.scope,
            workspace=workspace,
            provenance=provenance,
        )

    async def list_memories(self, caller: Caller, params: m.MemoryListParams) -> m.MemoryListResult:
        """Newest change first; a memory whose chain does not verify is left out and named
        in `tampered` (`alp memory show ID` says MEMORY_TAMPERED)."""
        workspace = None if params.all else self._workspace(params.workspace, params.cwd)
        statuses = ("active", "retracted") if params.retracted else ("active",)
        if params.query:
            terms = words(params.query)
            heads = await memories.search_heads(
                self.d.store, caller.uid, workspace, terms, params.limit
            )
        else:
            heads = await memories.heads(
                self.d.store, caller.uid, workspace=workspace, statuses=statuses, limit=params.limit
            )
        chains = await memories.versions_read(self.d.store, [h.id for h in heads])
        good, bad = verified(heads, chains)
        for memory_id in bad:
            log.warning("memory_tampered", memory_id=memory_id)
        return m.MemoryListResult(memories=[memory_of(h) for h in good], tampered=bad)

    async def search(self, caller: Caller, query: str, workspace: str | None) -> list[m.Memory]:
        """Active memories holding every word of `query`, verified (for `alp search`)."""
        terms = words(query)
        heads = await memories.search_heads(self.d.store, caller.uid, workspace, terms, SEARCH_HITS)
        chains = await memories.versions_read(self.d.store, [h.id for h in heads])
        good, _ = verified(heads, chains)
        return [memory_of(h) for h in good]

    async def show(self, caller: Caller, params: m.MemoryRef) -> m.MemoryShowResult:
        async def unit(tx: Tx) -> m.MemoryShowResult:
            head, chain = await load_verified(tx, params.id, caller.uid)
            cited = chain[-1][0].provenance
            citation = await _citation(tx, cited)
            if cited.history_entry_ids:
                entries = await entries_of(tx, cited.history_entry_ids, caller.uid)
                citation = msgspec.structs.replace(citation, entries=entries)
            return m.MemoryShowResult(
                memory=memory_of(head), versions=versions_of_chain(chain), citation=citation
            )

        return await self.d.store.write(unit)

    async def _next(
        self,
        caller: Caller,
        memory_id: str,
        change: str,
        door: str,
        *,
        text: str | None = None,
        kind: MemoryKind | None = None,
        tampered_ok: bool = False,
    ) -> m.Memory:
        at = self.d.clock.now_iso()
        head_chain = await self.d.store.write(
            lambda tx: _head_for_write(tx, memory_id, caller, tampered_ok)
        )
        head, chain = head_chain
        newest = chain[-1][0]
        sha = None
        if change == "confirmed" and newest.provenance.file_path is not None:
            sha = await _sha_of(newest.provenance.file_path)
        version = next_version(
            newest,
            change=change,  # type: ignore[arg-type]
            at=at,
            by=f"uid:{caller.uid}",
            door=door,
            text=text,
            file_sha256=sha,
        )
        if kind is not None:
            version = msgspec.structs.replace(version, kind=kind)
        # Chained to the digest stored for the head, which is what a retraction of a
        # tampered memory must hold on to.
        version = msgspec.structs.replace(version, previous_digest=chain[-1][1])

        async def unit(tx: Tx) -> m.Memory:
            now_head = await memories.head_of(tx, memory_id, caller.uid)
            if now_head is None or now_head.version != head.version:
                raise InvalidArgument(
                    f"memory {memory_id} changed meanwhile; show it again and retry",
                    id=memory_id,
                )
            await memories.write_version(tx, version, version_digest(version))
            written = await memories.head_of(tx, memory_id, caller.uid)
            assert written is not None
            return memory_of(written)

        memory = await self.d.store.write(unit)
        log.info("memory_" + change, memory_id=memory_id, version=version.version)
        return memory

    async def supersede(
        self, caller: Caller, params: m.MemorySupersedeParams, door: str
    ) -> m.Memory:
        await self._person(caller, f"supersede memory {params.id}")
        return await self._next(
            caller, params.id, "superseded", door, text=params.text, kind=params.kind
        )

    async def retract(self, caller: Caller, params: m.MemoryRef, door: str) -> m.Memory:
        await self._person(caller, f"retract memory {params.id}")
        return await self._next(caller, params.id, "retracted", door, tampered_ok=True)

    async def review(
        self, caller: Caller, params: m.MemoryReviewParams, door: str
    ) -> m.MemoryReviewResult:
        """Confirm what the person says is still true, then list what is old or whose cited
        file changed."""
        confirmed: list[m.Memory] = []
        if params.confirm:
            await self._person(caller, "confirm memories")
            for memory_id in params.confirm:
                confirmed.append(await self._next(caller, memory_id, "confirmed", door))
        workspace = None if params.all else self._workspace(params.workspace, params.cwd)
        now = self.d.clock.now()
        before = now.timestamp() - params.days * DAY_SECONDS
        cutoff = type(now).fromtimestamp(before, now.tzinfo).isoformat()
        store = self.d.store
        stale = await memories.heads(
            store, caller.uid, workspace=workspace, statuses=("active",),
            limit=m.MEMORY_LIST_MAX, confirmed_before=cutoff,
        )  # fmt: skip
        citing = await memories.heads(
            store, caller.uid, workspace=workspace, statuses=("active",),
            limit=m.MEMORY_LIST_MAX, cites_a_file=True,
        )  # fmt: skip
        changed: list[m.MemoryFileChange] = []
        for head in citing:
            assert head.file_path is not None
            now_sha = await _sha_of(head.file_path)
            if now_sha != head.file_sha256:
                changed.append(
                    m.MemoryFileChange(
                        memory=memory_of(head),
                        file_path=head.file_path,
                        then_sha256=head.file_sha256,
                        now_sha256=now_sha,
                    )
                )
        return m.MemoryReviewResult(
            stale=[memory_of(h) for h in stale], changed=changed, confirmed=confirmed
        )


async def _head_for_write(
    tx: Tx, memory_id: str, caller: Caller, tampered_ok: bool
) -> tuple[memories.HeadRow, Chain]:
    try:
        return await load_verified(tx, memory_id, caller.uid)
    except MemoryTampered:
        if not tampered_ok:
            raise
    head = await memories.head_of(tx, memory_id, caller.uid)
    if head is None:
        raise MemoryNotFound(f"no memory {memory_id!r} of yours", id=memory_id)
    chain = (await memories.versions_of(tx, [memory_id]))[memory_id]
    return head, chain


async def _citation(tx: Tx, cited: Provenance) -> m.MemoryCitation:
    """The citation in words; the thread and its line when they are still there."""
    if cited.thread_id is None:
        what = f"written by {cited.by} through {cited.door}"
        if cited.file_path:
            what += f", about {cited.file_path}"
        if cited.history_entry_ids:
            what += ", from history entries " + ", ".join(map(str, cited.history_entry_ids))
        return m.MemoryCitation(text=what)
    title = cited.thread_title or "(untitled)"
    exists, line_text = True, None
    try:
        await load_thread(tx, cited.thread_id)
    except ThreadNotFound:
        exists = False
    if exists and cited.context_revision is not None and cited.line_id is not None:
        try:
            snapshot, _ = await load_snapshot(tx, cited.thread_id, cited.context_revision)
            line_text = next(
                (line.text for _, line in pinned_lines(snapshot) if line.id == cited.line_id), None
            )
        except ThreadContextTampered:  # a context that no longer verifies: cite as text
            line_text = None
    where = f"thread {title!r} ({cited.thread_id})"
    if cited.context_revision is not None:
        where += f" at context revision {cited.context_revision}"
    pinned = f"{cited.line_kind or 'line'} {cited.line_id} pinned by {cited.execution_id}"
    text = f"{pinned} in {where}" if cited.line_id else f"from {where}"
    if cited.proposal_id:
        text += (
            f"; proposed by run {cited.execution_id} ({cited.proposal_id}), confirmed by {cited.by}"
        )
    if not exists:
        text += " — the thread is gone; this citation is all that is left of it"
    elif cited.context_revision is not None:
        text += f"; `alp thread context {cited.thread_id} --revision {cited.context_revision}`"
    return m.MemoryCitation(
        text=text,
        thread_id=cited.thread_id,
        thread_title=cited.thread_title,
        thread_exists=exists,
        context_revision=cited.context_revision,
        line_text=line_text,
    )


__all__ = ["SEARCH_HITS", "MemoryService", "file_sha256"]
