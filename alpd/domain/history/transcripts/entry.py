"""Types shared by the transcript readers: one conversation entry, usage, a parse result.

The readers are sans-IO (bytes in, these values out). Everything here is a frozen msgspec
Struct so the history store can hash, compare and encode entries without copying; new fields
get defaults and existing fields never change meaning (msgspec's schema-evolution rules).
"""

from __future__ import annotations

import hashlib
from typing import Literal, TypedDict

import msgspec

from alpd.domain.budgets.windows import RateWindow
from alpd.domain.secrets.filter import redacted_tail

__all__ = [
    "OUTPUT_TAIL_BYTES",
    "Entry",
    "HistoryBase",
    "Kind",
    "MissingSessionIdError",
    "ParseResult",
    "Role",
    "Usage",
    "output_digest",
    "output_tail",
]

Role = Literal["user", "assistant", "tool", "system"]
Kind = Literal["prompt", "reply", "tool_call", "tool_result", "error"]

# The history keeps only the end of a tool's output: the end is where a command's result and
# its error message usually are, and 2 KiB keeps one noisy build log from dominating storage.
OUTPUT_TAIL_BYTES = 2048


class MissingSessionIdError(ValueError):
    """An entry needs a session id, but neither the input nor the caller supplied one.

    Codex writes its session id once, in the file's first line; a caller that reads a rollout
    incrementally passes the id from the previous ``ParseResult`` (or from the file name).
    """


class Usage(msgspec.Struct, frozen=True):
    """Token counts of one model response (or a sum of them).

    ``input_tokens`` counts only *uncached* input on both runtimes: Anthropic reports it that
    way, OpenAI (Codex) includes cached tokens in ``input_tokens`` and the Codex reader
    subtracts them, so the four fields add up the same way everywhere.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0

    def plus(self, other: Usage) -> Usage:
        """The field-wise sum; usage sums are how totals over incremental reads are kept."""
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_creation_tokens=self.cache_creation_tokens + other.cache_creation_tokens,
        )


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One conversation entry, in the runtime-neutral shape the history store keeps.

    Tool entries carry their payload in ``tool_input`` / ``output_tail`` and have an empty
    ``text``: a tool's whole output is never kept, only its tail and the digest of the whole.
    """

    native_id: str
    session_id: str
    role: Role
    kind: Kind
    text: str = ""
    tool_name: str | None = None
    tool_input: str | None = None
    output_tail: str | None = None
    output_sha256: str | None = None
    timestamp: str | None = None
    model: str | None = None
    usage: Usage | None = None
    # Links a tool_result to its tool_call (Claude tool_use id, Codex call_id).
    call_id: str | None = None
    # A tool result the runtime marked as failed or refused (Claude ``is_error``).
    is_error: bool = False
    # Absolute byte offset of the line the entry came from: with a Codex fork's
    # ``HistoryBase.end_byte_offset`` it tells which parent entries the fork inherited.
    offset: int = 0


class EntryFields(TypedDict, total=False):
    """What a reader says of an entry beyond its identity, line and kind (the keyword
    arguments both readers' entry builders forward to ``Entry``)."""

    text: str
    tool_name: str | None
    tool_input: str | None
    output_tail: str | None
    output_sha256: str | None
    model: str | None
    call_id: str | None
    is_error: bool


class HistoryBase(msgspec.Struct, frozen=True, kw_only=True):
    """Where a Codex fork's inherited history lives: the parent file, up to a point.

    The fork's rollout holds only its own turns; its conversation is the parent's entries
    before ``end_byte_offset`` (or ``end_ordinal_exclusive``) followed by the fork's.
    The format names the parent by session id only; finding its file is the adapter's job.
    """

    parent_session_id: str
    end_ordinal_exclusive: int | None = None
    end_byte_offset: int | None = None


class ParseResult(msgspec.Struct, frozen=True, kw_only=True):
    """What one (possibly incremental) read of a transcript produced.

    ``consumed`` is absolute (``base_offset`` + bytes fully processed); the next read starts
    there. A final line without a newline is an unfinished write, neither consumed nor skipped.
    ``skipped`` counts complete lines that were not JSON or not a shape the reader knows.
    ``total_usage`` sums this read only, so totals over incremental reads are plain sums.
    """

    entries: list[Entry]
    skipped: int
    consumed: int
    session_id: str | None
    cost_usd: float | None = None
    total_usage: Usage = Usage()
    # The model in force after this read (Codex names it per turn, not per entry); pass it
    # back into the next incremental read.
    model: str | None = None
    history_base: HistoryBase | None = None
    #: the runtime's subscription windows as last reported in this read (Codex's
    #: `rate_limits`); None: none reported (an API key, or Claude Code)
    rate_windows: tuple[RateWindow, ...] | None = None


def output_tail(output: str, limit: int = OUTPUT_TAIL_BYTES) -> str:
    """The last ``limit`` bytes of ``output`` in UTF-8, starting on a character boundary.

    A tail that is cut is cut from the *redacted* output (``redacted_tail``): the cut would
    hide a key's BEGIN line from the filter and keep the key's body. An output that fits is
    returned as it is: the history redacts every text it stores, this one included."""
    if len(output) * 4 <= limit or len(output.encode("utf-8", "surrogatepass")) <= limit:
        return output
    return redacted_tail(output, limit)


def output_digest(output: str) -> str:
    """sha256 (hex) of the whole output's UTF-8 bytes, so a tail can be tied to its source."""
    return hashlib.sha256(output.encode("utf-8", "surrogatepass")).hexdigest()
