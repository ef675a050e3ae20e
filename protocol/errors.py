"""The error table of the wire contract: names and stable integer codes.

Stdlib only, so the thin client can import it without paying for msgspec.

Compatibility rule: a name never changes its code and is never renamed; new names are
appended with new codes. JSON-RPC's own codes (-32700 … -32603) keep their spec meaning.
Domain codes live outside the reserved range -32768..-32000 (docs/contract.md): 1xxx are thread
and execution errors, 2xxx are limits of the transport, 3xxx are runtime and supervision.
"""

from __future__ import annotations

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Final


PARSE_ERROR: Final = -32700
INVALID_REQUEST: Final = -32600
METHOD_NOT_FOUND: Final = -32601
INVALID_PARAMS: Final = -32602
INTERNAL_ERROR: Final = -32603

#: name -> (code, default human message). Append only.
DOMAIN_ERRORS: Final[dict[str, tuple[int, str]]] = {
    "THREAD_NOT_FOUND": (1001, "no such thread"),
    "THREAD_BUSY": (1002, "the thread already has an unsettled root"),
    "THREAD_REVISION_CONFLICT": (1003, "the thread moved on since the revision you read"),
    "THREAD_CLOSED": (1004, "the thread is closed"),
    "THREAD_NOT_CLOSED": (1005, "only a closed thread can be archived"),
    "THREAD_CONTEXT_TAMPERED": (1006, "a stored context snapshot no longer matches its digest"),
    "THREAD_EXECUTION_BINDING_MISMATCH": (1007, "the execution is not a root of this thread"),
    "EXECUTION_NOT_FOUND": (1008, "no such execution"),
    "EXECUTION_SETTLED": (1009, "the execution has already settled"),
    "RUNTIME_NOT_FOUND": (1010, "no such runtime"),
    "RUNTIME_UNAVAILABLE": (1011, "the runtime's program could not be found"),
    "AGENT_NOT_FOUND": (1012, "no such agent"),
    "DELEGATION_DENIED": (1013, "the agent is not in this execution's delegatesTo"),
    "PERMISSION_DENIED": (1014, "the caller is not the owner"),
    "PIN_OUTSIDE_EXECUTION": (1015, "the caller is not inside a running execution's process tree"),
    "HANDOFF_LOOP": (1016, "the handoff chain is too deep"),
    "HANDOFF_RATE_LIMITED": (1017, "too many handoffs between these threads"),
    "HANDOFF_DENIED": (1018, "the handoff is not allowed"),
    "EXECUTION_NOT_RUNNING": (1019, "the execution is not running"),
    "INVALID_ARGUMENT": (1020, "an argument is not valid"),
    "EXECUTION_POLICY_TAMPERED": (
        1021,
        "a stored execution policy no longer matches its policyHash",
    ),
    "CONFIG_INVALID": (1022, "config.toml is not valid; the daemon keeps its previous config"),
    "HISTORY_ENTRY_TAMPERED": (1023, "a stored history entry no longer matches its digest"),
    "KIND_NOT_ALLOWED": (1024, "only the daemon starts this kind of session or writes an origin"),
    "QUEUE_FULL": (1025, "too many deliveries are waiting for this thread"),
    "HANDOFF_TOO_LARGE": (1026, "the handoff's summary is over its size cap"),
    "INBOX_ITEM_NOT_FOUND": (1027, "no such item in your inbox"),
    "NOT_FROM_A_RUN": (
        1028,
        "only the person may do this, or a run reached beyond its own thread",
    ),
    "SCHEDULE_NOT_FOUND": (1030, "no such schedule"),
    "SCHEDULE_INVALID": (1031, "the schedule's expression, interval, time or zone is not valid"),
    "EXECUTION_ROOT_SETTLED": (
        1032,
        "the run's root has settled; a pin of it could no longer reach the thread",
    ),
    "THREAD_AMBIGUOUS": (
        1041,
        "the name matches several threads; name one by its id (data.candidates lists them)",
    ),
    "WEB_UNAVAILABLE": (1050, "the web page cannot listen on its port"),
    "SEARCH_INDEX_NOT_READY": (
        1070,
        "search by meaning was asked for, but no meaning index can answer yet",
    ),
    "MEMORY_NOT_FOUND": (1080, "no such memory"),
    "MEMORY_TAMPERED": (
        1081,
        "a stored memory version no longer matches its digest chain",
    ),
    "HISTORY_ENTRY_NOT_FOUND": (1082, "no such history entry of yours"),
    "SESSION_ALREADY_ADOPTED": (
        1090,
        "the imported session is a root of a thread already; read or continue that thread",
    ),
    "MODEL_FETCH_FAILED": (
        1071,
        "the model could not be fetched or did not match its digests; nothing was installed",
    ),
    "THREAD_NOTHING_TO_UNDO": (
        1040,
        "no settled root since the last clear is left to undo; older revisions stay readable",
    ),
    "CHANNEL_NOT_CONFIGURED": (
        1110,
        "the chat channel has no table in config.toml, or its secrets cannot be read",
    ),
    "CHANNEL_UNAVAILABLE": (
        1111,
        "the chat channel is configured but not running (another alpd holds it, or it fails)",
    ),
    "CHECKPOINT_NOT_FOUND": (
        1120,
        "no file checkpoint of that root (none taken, or dropped by retention)",
    ),
    "WORKSPACE_CHANGED": (
        1121,
        "the files changed since that step ended; a restore would lose those changes",
    ),
    "BUNDLE_INVALID": (
        1130,
        "the file is not a thread bundle alp can read (format, version, shape or size)",
    ),
    "BUNDLE_TAMPERED": (
        1131,
        "a thread bundle's records no longer match their manifest or their digests",
    ),
    "BUNDLE_CONFLICT": (
        1132,
        "the bundle's thread (or one of its ids) is here already with other content",
    ),
    "WORKSPACE_NOT_FOUND": (
        1133,
        "no checkout of the thread's repository here: not at its recorded path, not the cwd",
    ),
    "BUDGET_EXCEEDED": (
        1140,
        "the thread or schedule has spent its budget; raise or clear it to run again",
    ),
    "HOST_LEASE_LOST": (
        1150,
        "this host's lease expired and another host took over what it ran; continue the "
        "thread to run again",
    ),
    "HOST_NOT_OWNER": (
        1151,
        "another host runs that execution while its lease lives; settle or cancel it there",
    ),
    "FRAME_TOO_LARGE": (2001, "the message is larger than the frame limit"),
    "BATCH_TOO_LARGE": (2002, "the batch has more requests than allowed"),
    "TOO_MANY_CONNECTIONS": (2003, "too many connections from this user"),
    "FRAME_TIMEOUT": (2004, "a partial message stalled past the deadline"),
    "SUBSCRIBER_TOO_SLOW": (2005, "the subscriber fell too far behind and was dropped"),
    "STORAGE_FULL": (2006, "the state database is full"),
    "SHUTTING_DOWN": (2007, "the daemon is shutting down"),
    "SPAWN_FAILED": (3001, "the runtime could not be started"),
    "HISTORY_READER_FAILED": (
        3002,
        "the process that reads transcripts for the history stopped; run the import again",
    ),
}

CODE_TO_NAME: Final[dict[int, str]] = {code: name for name, (code, _) in DOMAIN_ERRORS.items()}


def code_of(name: str) -> int:
    """The stable code for an error name (KeyError for an unknown name)."""
    return DOMAIN_ERRORS[name][0]
