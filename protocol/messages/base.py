"""What every wire type is built on: `Wire` (camelCase, defaults omitted), the value types
several domains share, and the bounds of the params."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

PROTOCOL_VERSION = 1

ThreadStatus = Literal["open", "closed", "archived"]
Kind = Literal["interactive", "push", "scheduled", "sub-agent", "temp"]
Outcome = Literal["completed", "failed", "cancelled", "interrupted", "timed-out", "budget-exceeded"]
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
#: a run's time limit: 1 s to a week (`[agents.NAME] timeout`, `--timeout`)
TimeoutSeconds = Annotated[int, msgspec.Meta(ge=1, le=7 * 24 * 3600)]
#: a run's cost cap in USD (`[agents.NAME] budget_usd`, `--budget-usd`)
BudgetUsd = Annotated[float, msgspec.Meta(gt=0, le=1_000_000)]
#: a cap in tokens (`[agents.NAME] budget_tokens`, `--budget-tokens`)
BudgetTokens = Annotated[int, msgspec.Meta(gt=0, le=1_000_000_000_000)]
#: free text a person or a run writes (a prompt, a summary, a delegated task): 256 KiB
Text = Annotated[str, msgspec.Meta(max_length=256 * 1024)]
#: the name of a door a request came through: one short lowercase word
DoorName = Annotated[str, msgspec.Meta(pattern="^[a-z][a-z0-9-]{0,31}$")]
#: seconds to wait (a week at most: a longer wait is a mistake, not a plan)
Timeout = Annotated[float, msgspec.Meta(ge=0, le=7 * 24 * 3600)]


# Limits the daemon's services enforce with a named error (INVALID_ARGUMENT, …) rather than at
# decode: they are in the OpenRPC document as `maxLength` (characters, what JSON Schema can
# count) and `x-maxBytes` (UTF-8 bytes, the daemon's unit) or `minimum`/`maximum`, and
# nowhere else on the wire (`extra_json_schema` changes no decoding). A test checks each
# against the constant the daemon enforces.

#: a pin's text (context/pin), UTF-8 bytes after its surrounding whitespace is stripped
PIN_MAX_BYTES = 4096
#: a push's text (thread/push) and a schedule's prompt (schedule/create), UTF-8 bytes
PUSH_MAX_BYTES = 16 * 1024
SCHEDULE_PROMPT_MAX_BYTES = 16 * 1024
#: a handoff's summary (handoff/send), UTF-8 bytes
HANDOFF_SUMMARY_MAX_BYTES = 4 * 1024
#: hits per history/search call
SEARCH_MAX_LIMIT = 200


def documented(**schema: Any) -> msgspec.Meta:
    """What the OpenRPC document says of a value beyond its type, for rules the daemon
    checks itself (a byte cap, a range with a named error): schema only, no decoding."""
    return msgspec.Meta(extra_json_schema=schema)


def byte_capped(limit: int, what: str, error: str = "INVALID_ARGUMENT") -> msgspec.Meta:
    """A text the daemon caps in UTF-8 bytes, refusing a longer one with `error`."""
    return documented(
        maxLength=limit,
        description=f"{what}; at most {limit} bytes of UTF-8 ({error} above)",
        **{"x-maxBytes": limit, "x-error": error},
    )


class Wire(msgspec.Struct, rename="camel", omit_defaults=True, forbid_unknown_fields=False):
    """Base of every wire type."""


class Empty(Wire):
    pass


def to_wire(value: Any) -> Any:
    """Builtins for encoding (msgspec encodes Structs directly; this is for tests/tools)."""
    return msgspec.to_builtins(value)


__all__ = [
    "HANDOFF_SUMMARY_MAX_BYTES",
    "PIN_MAX_BYTES",
    "PROTOCOL_VERSION",
    "PUSH_MAX_BYTES",
    "SCHEDULE_PROMPT_MAX_BYTES",
    "SEARCH_MAX_LIMIT",
    "AbsolutePath",
    "BudgetTokens",
    "BudgetUsd",
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
    "TimeoutSeconds",
    "Title",
    "Wire",
    "byte_capped",
    "documented",
    "to_wire",
]
