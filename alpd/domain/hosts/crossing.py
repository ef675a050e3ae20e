"""Which notifications cross hosts, and the small message that carries one (docs/many-machines.md,
"Events across hosts").

A notification published on one host is told to the others as a **reference**: the method, the
id of the row it is about, its change and its thread, and the host that published it — never
the row itself. A host that receives one reads the row from the shared database (through its
own owner checks) and builds the notification as it would for its own. So a message stays far
below PostgreSQL's 8000-byte NOTIFY payload, and nothing of a row goes through a channel that
every role on the database may listen to.

Pure: the functions read a notification's decoded params and write or read the message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CROSSING",
    "MAX_PAYLOAD",
    "Reference",
    "channel_for",
    "decode",
    "encode",
    "reference_of",
    "stamped",
]

#: PostgreSQL refuses a NOTIFY payload of 8000 bytes or more
MAX_PAYLOAD: Final = 7999
#: what `stamped` adds at most (`"s":` and a number of up to 20 digits, a comma)
_STAMP: Final = 25
#: PostgreSQL's longest identifier (NAMEDATALEN - 1): a channel name longer than this is refused
_MAX_CHANNEL: Final = 63

#: method → (the params' field holding the row, its id field): what crosses hosts. The rest
#: stay on their host: a history copy's progress and a transcript's items are about the host's
#: own files, a budget warning is told by the host that enforces it.
CROSSING: Final[dict[str, tuple[str, str]]] = {
    "thread/changed": ("thread", "id"),
    "execution/changed": ("execution", "id"),
    "thread/report": ("report", "id"),
    "handoff/delivered": ("handoff", "id"),
    "inbox/changed": ("item", "id"),
    "schedule/changed": ("schedule", "id"),
}

#: a change that leaves no row behind to read: not told to other hosts
_GONE: Final = frozenset({("schedule/changed", "deleted")})


@dataclass(frozen=True, slots=True)
class Reference:
    """One notification as another host is told it."""

    host: str
    #: its place in what `host` sent: PostgreSQL delivers two equal payloads of one
    #: transaction once, and two equal events (a thread settled by two roots) are two
    seq: int
    method: str
    id: str
    change: str | None
    thread_id: str | None
    #: its number in the database's log of references (`stamped`), in the order the sending
    #: transactions committed; 0 for one never logged
    logged: int = 0


def reference_of(host: str, seq: int, method: str, params: Any) -> Reference | None:
    """The reference that tells other hosts of a notification (its decoded `params`), or None
    when it does not cross: a method of this host only, a row that is gone, or params without
    the row (an inbox item that is a memory proposal)."""
    where = CROSSING.get(method)
    if where is None or not isinstance(params, dict):
        return None
    row = params.get(where[0])
    change = params.get("change")
    if not isinstance(row, dict) or (method, change) in _GONE:
        return None
    key = row.get(where[1])
    if not isinstance(key, str | int) or isinstance(key, bool):
        return None
    thread_id = row.get("threadId", row.get("targetThreadId"))
    if method == "thread/changed":
        thread_id = str(key)
    return Reference(
        host=host,
        seq=seq,
        method=method,
        id=str(key),
        change=change if isinstance(change, str) else None,
        thread_id=thread_id if isinstance(thread_id, str) else None,
    )


def encode(reference: Reference) -> str | None:
    """The payload of `reference` (NOTIFYed `stamped`); None if it would not fit (ids are
    short: never seen, but refused rather than sent truncated)."""
    payload = json.dumps(
        {
            "h": reference.host,
            "n": reference.seq,
            "m": reference.method,
            "i": reference.id,
            "c": reference.change,
            "t": reference.thread_id,
        },
        separators=(",", ":"),
        ensure_ascii=True,
    )
    return payload if len(payload) + _STAMP <= MAX_PAYLOAD else None


def stamped(payload: str, logged: int) -> str:
    """`payload` (from `encode`) with its number in the log added, as it is NOTIFYed: the
    number is short, so the payload still fits."""
    return f'{{"s":{int(logged)},{payload[1:]}'


def decode(payload: str, logged: int | None = None) -> Reference | None:
    """A payload read back; None for anything that is not one this module wrote (another
    program may NOTIFY on the same channel). Its number in the log is the stamp's, or
    `logged` for a payload read from the log itself."""
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    host, seq, method, key = value.get("h"), value.get("n"), value.get("m"), value.get("i")
    change, thread_id = value.get("c"), value.get("t")
    if not (isinstance(host, str) and isinstance(method, str) and isinstance(key, str)):
        return None
    if not isinstance(seq, int) or isinstance(seq, bool):
        return None
    if method not in CROSSING or (method, change) in _GONE:
        return None
    if not (change is None or isinstance(change, str)):
        return None
    if not (thread_id is None or isinstance(thread_id, str)):
        return None
    number = value.get("s", 0) if logged is None else logged
    if not isinstance(number, int) or isinstance(number, bool) or number < 0:
        return None
    return Reference(
        host=host,
        seq=seq,
        method=method,
        id=key,
        change=change,
        thread_id=thread_id,
        logged=number,
    )


def channel_for(role: str, digest: str) -> str:
    """The channel of one database role (`alp:ROLE`; `digest` of the role stands in for a
    name too long for an identifier): a person's hosts connect as their role, so they hear
    each other and not another person's hosts on the same database."""
    channel = f"alp:{role}"
    if len(channel.encode()) <= _MAX_CHANNEL:
        return channel
    return f"alp:{digest[:40]}"
