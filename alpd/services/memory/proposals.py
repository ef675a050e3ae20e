"""What a run proposes to remember: it waits in the person's inbox, never in memory.

A run asks through the MCP tool `remember` (`memory/propose`); alpd finds the run by its
process (`execution_of_caller`: PIN_OUTSIDE_EXECUTION from anywhere else), so the proposal's
origin — the run and its thread — is the daemon's to say, never the text's. The text is
secret-filtered and capped as a memory's is before it is stored. The proposal is announced
(`inbox/changed`, with `proposal`) and waits:

- confirmed by the person (`inbox/confirm ID`), it becomes a memory (version 1) whose
  provenance names the proposal, the run and its thread, and the person who confirmed it;
- dismissed (`memory/dismiss ID`; `alp inbox dismiss ID` calls it), it stays on record and
  is never used.

Confirming and dismissing are the person's: from inside a run they are NOT_FROM_A_RUN (the
inbox's rule). A proposal that is not the caller's, or no longer waits, is
INBOX_ITEM_NOT_FOUND.
"""

from __future__ import annotations

from typing import Final

import anyio

from alpd.domain.memory.record import Provenance, clean_text
from alpd.errors import InboxItemNotFound
from alpd.services.context import Caller, Daemon
from alpd.services.memory.service import MemoryService
from alpd.services.memory.views import proposal_of
from alpd.services.runs.callers import execution_of_caller
from alpd.store import memory as memories
from alpd.store.db import Tx
from alpd.store.memory import ProposalRow
from alpd.store.runs import execution_by_id
from alpd.store.threads.shell import load_thread
from protocol import jsonrpc
from protocol import messages as m

PROPOSAL_PREFIX: Final = "prop_"
#: proposals `inbox/list` shows at most
WAITING_MAX: Final = 200


def is_proposal(item_id: str) -> bool:
    return item_id.startswith(PROPOSAL_PREFIX)


def publish_proposal(daemon: Daemon, proposal: m.MemoryProposal, change: str) -> None:
    frame = jsonrpc.encode_notification(
        "inbox/changed",
        m.InboxChanged(proposal=proposal, change=change),  # type: ignore[arg-type]
    )
    daemon.events.publish("inbox/changed", frame, proposal.thread_id)


class Proposals:
    def __init__(self, daemon: Daemon, service: MemoryService) -> None:
        self.d = daemon
        self.service = service

    async def propose(self, caller: Caller, params: m.MemoryProposeParams) -> m.MemoryProposal:
        run = await execution_of_caller(self.d.store, caller)
        root = (
            run if run.thread_id is not None else await execution_by_id(self.d.store, run.root_id)
        )
        thread_id = root.thread_id if root is not None else None
        assert thread_id is not None
        text = clean_text(params.text)
        at = self.d.clock.now_iso()
        proposal_id = self.d.clock.new_id(PROPOSAL_PREFIX)

        async def unit(tx: Tx) -> m.MemoryProposal:
            thread = await load_thread(tx, thread_id)
            await memories.insert_proposal(
                tx,
                ProposalRow(
                    id=proposal_id,
                    owner_uid=caller.uid,
                    thread_id=thread_id,
                    execution_id=run.id,
                    workspace=thread.workspace,
                    scope=params.scope,
                    kind=params.kind,
                    text=text,
                    file_path=params.file,
                    status="inbox",
                    proposed_at=at,
                    decided_at=None,
                    memory_id=None,
                ),
            )
            row = await memories.proposal_of(tx, proposal_id, caller.uid)
            assert row is not None
            return proposal_of(row)

        proposal = await self.d.store.write(unit)
        publish_proposal(self.d, proposal, "added")
        return proposal

    async def waiting(self, caller: Caller, thread_id: str | None) -> list[m.MemoryProposal]:
        rows = await memories.proposals_waiting(self.d.store, caller.uid, thread_id, WAITING_MAX)
        return [proposal_of(row) for row in rows]

    async def _decide(self, caller: Caller, proposal_id: str, status: str) -> ProposalRow:
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> ProposalRow:
            row = await memories.proposal_of(tx, proposal_id, caller.uid)
            if row is None or not await memories.decide_proposal(tx, proposal_id, status, at, None):
                state = "" if row is None else f" (it is {row.status})"
                raise InboxItemNotFound(
                    f"no item {proposal_id!r} waits in your inbox{state}; `alp inbox` lists them",
                    id=proposal_id,
                )
            return row

        return await self.d.store.write(unit)

    async def confirm(self, caller: Caller, proposal_id: str, door: str) -> m.InboxConfirmResult:
        """The proposal becomes a memory; the caller is the person (checked by the inbox)."""
        row = await self._decide(caller, proposal_id, "confirmed")
        try:
            memory = await self.service.create(
                caller,
                text=row.text,
                kind=row.kind,  # type: ignore[arg-type]
                scope=row.scope,  # type: ignore[arg-type]
                workspace=row.workspace,
                provenance=Provenance(
                    by=f"uid:{caller.uid}",
                    door=door,
                    thread_id=row.thread_id,
                    thread_title=row.thread_title,
                    execution_id=row.execution_id,
                    proposal_id=row.id,
                    file_path=row.file_path,
                ),
            )
        except BaseException:
            with anyio.CancelScope(shield=True):
                await self.d.store.write(lambda tx: memories.reopen_proposal(tx, proposal_id))
            raise
        await self.d.store.write(lambda tx: memories.link_proposal(tx, proposal_id, memory.id))
        proposal = await self._shown(caller, proposal_id)
        publish_proposal(self.d, proposal, "confirmed")
        return m.InboxConfirmResult(proposal=proposal, memory=memory)

    async def dismiss(self, caller: Caller, proposal_id: str) -> m.MemoryProposal:
        await self._decide(caller, proposal_id, "dismissed")
        proposal = await self._shown(caller, proposal_id)
        publish_proposal(self.d, proposal, "dismissed")
        return proposal

    async def _shown(self, caller: Caller, proposal_id: str) -> m.MemoryProposal:
        async def unit(tx: Tx) -> m.MemoryProposal:
            row = await memories.proposal_of(tx, proposal_id, caller.uid)
            assert row is not None
            return proposal_of(row)

        return await self.d.store.write(unit)


__all__ = ["PROPOSAL_PREFIX", "Proposals", "is_proposal"]
