"""What every wire type is built on: `Wire` (camelCase, defaults omitted), the value types
several domains share, and the bounds of the params."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

PROTOCOL_VERSION = 1

ThreadStatus = Literal["open", "closed", "archived"]
Kind = Literal["interactive", "push", "scheduled", "sub-agent", "temp"]
Outcome = Literal["completed", "failed", "cancelled", "interrupted"]
ExecutionStatus = Literal["reserved", "running", "settled"]
PinKind = Literal["objective", "decision", "constraint", "open-item", "next-action", "resolve"]
HistoryLevel = Literal["complete", "partial", "final-only", "unsupported", "pending"]
#: how clear and undo label a root's history entries (alpd.domain.threads.steering)
HistoryLabel = Literal["before-clear", "undone"]


# Bounds of the params (checked once, when a request is decoded; a value outside them is
# -32602 naming the field). They are what the OS and SQLite accept, so a valid-typed value
# never reaches them to fail there as -32603.

#: an absolute filesystem path as a client sends it (its cwd): never relative to the
#: daemon's own directory, never with a NUL byte, within PATH_MAX (4096 with its NUL) and
#: NAME_MAX (255 bytes a name; the pattern counts characters, the OS bytes)
AbsolutePath = Annotated[
    str, msgspec.Meta(pattern="^(?:/+[^/\x00]{1,255})*/*$", min_length=1, max_length=4095)
]
#: a pid_t: what kill(2) and /proc take (0 and negatives name process groups, never a run)
Pid = Annotated[int, msgspec.Meta(ge=1, le=2**31 - 1)]
#: an exit status as a shell reports it, or minus a signal number (what wait(2) can give)
ExitCode = Annotated[int, msgspec.Meta(ge=-(2**31), le=2**31 - 1)]
#: a thread revision (a SQLite INTEGER is 64-bit; JSON numbers are exact to 2**53)
Revision = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
#: a thread's title: one line a person reads in a listing
Title = Annotated[str, msgspec.Meta(max_length=1024)]
#: free text a person or a run writes (a prompt, a summary, a delegated task): 256 KiB
Text = Annotated[str, msgspec.Meta(max_length=256 * 1024)]
#: the name of a door a request came through: one short lowercase word
DoorName = Annotated[str, msgspec.Meta(pattern="^[a-z][a-z0-9-]{0,31}$")]
#: seconds to wait (a week at most: a longer wait is a mistake, not a plan)
Timeout = Annotated[float, msgspec.Meta(ge=0, le=7 * 24 * 3600)]


class Wire(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=False):
    """Base of every wire type."""


class Empty(Wire):
    pass


def to_wire(value: Any) -> Any:
    """Builtins for encoding (msgspec encodes Structs directly; this is for tests/tools)."""
    return msgspec.to_builtins(value)


__all__ = [
    "PROTOCOL_VERSION",
    "AbsolutePath",
    "DoorName",
    "Empty",
    "ExecutionStatus",
    "ExitCode",
    "HistoryLabel",
    "HistoryLevel",
    "Kind",
    "Outcome",
    "Pid",
    "PinKind",
    "Revision",
    "Text",
    "ThreadStatus",
    "Timeout",
    "Title",
    "Wire",
    "to_wire",
]
