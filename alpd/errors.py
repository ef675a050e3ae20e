"""Domain errors: one exception class per error name of the wire contract.

Raised anywhere in alpd (domain, store, services); translated to a JSON-RPC error object
in exactly one place (`alpd.rpc.dispatch`). `data` carries details a client can act on
(the busy root, the current revision …) and never a traceback.
"""

from __future__ import annotations

from typing import Any, ClassVar

from protocol.errors import DOMAIN_ERRORS


class AlpError(Exception):
    """Base of every error a caller can cause; `name` is its wire name."""

    name: ClassVar[str] = "INTERNAL"

    def __init__(self, message: str | None = None, **data: Any) -> None:
        self.message = message or DOMAIN_ERRORS[self.name][1]
        self.data = data
        super().__init__(self.message)

    @property
    def code(self) -> int:
        return DOMAIN_ERRORS[self.name][0]


class ThreadNotFound(AlpError):
    name = "THREAD_NOT_FOUND"


class ThreadAmbiguous(AlpError):
    """A title or id prefix that names several threads; `data.candidates` lists them."""

    name = "THREAD_AMBIGUOUS"


class ThreadBusy(AlpError):
    name = "THREAD_BUSY"


class ThreadRevisionConflict(AlpError):
    name = "THREAD_REVISION_CONFLICT"


class ThreadClosed(AlpError):
    name = "THREAD_CLOSED"


class ThreadNotClosed(AlpError):
    name = "THREAD_NOT_CLOSED"


class ThreadContextTampered(AlpError):
    name = "THREAD_CONTEXT_TAMPERED"


class ThreadExecutionBindingMismatch(AlpError):
    name = "THREAD_EXECUTION_BINDING_MISMATCH"


class ExecutionNotFound(AlpError):
    name = "EXECUTION_NOT_FOUND"


class ExecutionSettled(AlpError):
    name = "EXECUTION_SETTLED"


class ExecutionPolicyTampered(AlpError):
    name = "EXECUTION_POLICY_TAMPERED"


class HistoryEntryTampered(AlpError):
    name = "HISTORY_ENTRY_TAMPERED"


class ExecutionNotRunning(AlpError):
    name = "EXECUTION_NOT_RUNNING"


class RuntimeNotFound(AlpError):
    name = "RUNTIME_NOT_FOUND"


class RuntimeUnavailable(AlpError):
    name = "RUNTIME_UNAVAILABLE"


class AgentNotFound(AlpError):
    name = "AGENT_NOT_FOUND"


class ConfigInvalid(AlpError):
    name = "CONFIG_INVALID"


class DelegationDenied(AlpError):
    name = "DELEGATION_DENIED"


class PermissionDenied(AlpError):
    name = "PERMISSION_DENIED"


class PinOutsideExecution(AlpError):
    name = "PIN_OUTSIDE_EXECUTION"


class ExecutionRootSettled(AlpError):
    name = "EXECUTION_ROOT_SETTLED"


class InvalidArgument(AlpError):
    name = "INVALID_ARGUMENT"


class KindNotAllowed(AlpError):
    name = "KIND_NOT_ALLOWED"


class QueueFull(AlpError):
    name = "QUEUE_FULL"


class ScheduleNotFound(AlpError):
    name = "SCHEDULE_NOT_FOUND"


class ScheduleInvalid(AlpError):
    name = "SCHEDULE_INVALID"


class ThreadNothingToUndo(AlpError):
    name = "THREAD_NOTHING_TO_UNDO"


class StorageFull(AlpError):
    name = "STORAGE_FULL"


class ShuttingDown(AlpError):
    name = "SHUTTING_DOWN"


class SpawnFailed(AlpError):
    name = "SPAWN_FAILED"


class HistoryReaderFailed(AlpError):
    name = "HISTORY_READER_FAILED"


class HandoffLoop(AlpError):
    name = "HANDOFF_LOOP"


class HandoffRateLimited(AlpError):
    name = "HANDOFF_RATE_LIMITED"


class HandoffDenied(AlpError):
    name = "HANDOFF_DENIED"


class HandoffTooLarge(AlpError):
    name = "HANDOFF_TOO_LARGE"


class InboxItemNotFound(AlpError):
    name = "INBOX_ITEM_NOT_FOUND"


class NotFromARun(AlpError):
    """Asked by a run: what only the person may do, or a reach beyond the run's own thread."""

    name = "NOT_FROM_A_RUN"


class MemoryNotFound(AlpError):
    """No memory of the caller's has this id (another user's is not even confirmed to
    exist)."""

    name = "MEMORY_NOT_FOUND"


class MemoryTampered(AlpError):
    """A memory version was changed outside alp: it no longer chains (`data.memoryId`,
    `data.version`)."""

    name = "MEMORY_TAMPERED"


class HistoryEntryNotFound(AlpError):
    """A memory cites a history entry that is not there or not the caller's
    (`data.entryIds`: those not found)."""

    name = "HISTORY_ENTRY_NOT_FOUND"


class SearchIndexNotReady(AlpError):
    """`--mode meaning` while the meaning index is off or still building its first
    generation; `data.state` is the index's state."""

    name = "SEARCH_INDEX_NOT_READY"


class ModelFetchFailed(AlpError):
    """`alp model fetch` could not download the model, or a file did not match the size and
    digest its source listed: nothing was installed. Raised by the client (the download is
    the person's command, never alpd's); named here with the others."""

    name = "MODEL_FETCH_FAILED"


class WebUnavailable(AlpError):
    name = "WEB_UNAVAILABLE"


class SessionAlreadyAdopted(AlpError):
    """`thread/adopt` of an imported session some root already reads: `data` names that
    root's thread, execution and sequence (adopting is once per session, never a copy)."""

    name = "SESSION_ALREADY_ADOPTED"


class ChannelNotConfigured(AlpError):
    name = "CHANNEL_NOT_CONFIGURED"


class ChannelUnavailable(AlpError):
    name = "CHANNEL_UNAVAILABLE"


class CheckpointNotFound(AlpError):
    """No file checkpoint of the step asked for: none was taken (checkpoints off, a root
    older than them, a failure logged at the time) or retention dropped it."""

    name = "CHECKPOINT_NOT_FOUND"


class BudgetExceeded(AlpError):
    """A root that would run on a thread or schedule already at its hard budget; `data`
    names the scope, its id, the limit and the spend."""

    name = "BUDGET_EXCEEDED"


class HostLeaseLost(AlpError):
    """This host's lease expired and another host took it over: what it ran then was settled
    `interrupted` there (or will be), and its schedules fire there now; `data` names the
    execution, the host that took over and when (docs/many-machines.md)."""

    name = "HOST_LEASE_LOST"


class HostNotOwner(AlpError):
    """An execution another host runs, asked to be settled or cancelled here while that
    host's lease lives; `data` names the host and its lease."""

    name = "HOST_NOT_OWNER"


class WorkspaceChanged(AlpError):
    """A file restore that would lose changes made after the step ended; `data.changed`
    lists them (restore with force to go ahead: the restore is itself undoable)."""

    name = "WORKSPACE_CHANGED"


class BundleInvalid(AlpError):
    """A file that is not a thread bundle this alp reads: not gzip, not JSON lines, an
    unknown format or version, a record of the wrong shape, or over a size cap (`data.limit`)."""

    name = "BUNDLE_INVALID"


class BundleTampered(AlpError):
    """A bundle whose bytes no longer match its manifest, or whose records fail their own
    digests (a snapshot, a policy, a checkpoint, a history entry): `data.what` names it."""

    name = "BUNDLE_TAMPERED"


class BundleConflict(AlpError):
    """The bundle's thread is here with another state, or one of its ids belongs to
    something else here: nothing is imported (ids are never remapped silently)."""

    name = "BUNDLE_CONFLICT"


class WorkspaceNotFound(AlpError):
    """The thread's workspace is a repository this host has no checkout of where alp looks
    (the recorded path, the caller's cwd): `data.remote` names the repository."""

    name = "WORKSPACE_NOT_FOUND"
