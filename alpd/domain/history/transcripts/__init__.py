"""Pure readers of the runtimes' native transcripts: bytes in, conversation entries out.

``read_claude`` and ``read_codex`` take the bytes of a transcript from some offset on and
return a ``ParseResult``: the entries of every complete line, how many complete lines were
corrupt or of an unknown shape, and the absolute offset the next incremental read starts
from. They do no IO and read no clock; the history sync worker owns files and offsets.
"""

from alpd.domain.history.transcripts.claude import read_claude
from alpd.domain.history.transcripts.codex import read_codex
from alpd.domain.history.transcripts.entry import (
    OUTPUT_TAIL_BYTES,
    Entry,
    HistoryBase,
    Kind,
    MissingSessionIdError,
    ParseResult,
    Role,
    Usage,
    output_digest,
    output_tail,
)

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
    "read_claude",
    "read_codex",
]
