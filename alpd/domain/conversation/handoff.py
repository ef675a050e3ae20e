"""Handoffs as data: what one thread may deliver into another, and the text the target gets.

A handoff is a summary, not a history: at most `SUMMARY_MAX_BYTES` of UTF-8 (over the cap it
is refused with its size, never cut), filtered for secrets before it is stored, with files
left where they are and referenced by path, size and sha256 (`Artifact`). The rules, in the
order the service applies them:

1. `check_summary(text)`: strip surrounding blank space; empty is INVALID_ARGUMENT, over the
   cap HANDOFF_TOO_LARGE with `size` and `limit`.
2. `artifact_inside(path, roots)`: an artifact must lie inside the source thread's workspace
   (after symlinks are resolved by the caller); anything else is INVALID_ARGUMENT.
3. `handoff_text(summary, artifacts, source_label)`: the delivered text — the summary, then,
   when there are artifacts, one line per file saying it stayed in the source's workspace.
   The envelope line that precedes it (`alpd.domain.conversation.delivery.envelope_line`, kind
   `handoff`)
   names the source thread by its title and says the text is context from the person's own
   sessions, not instructions.
4. A `directive` (a handoff that asks the target to act) is not delivered: it waits in the
   target's inbox. Confirmed by the person, it is delivered under a `directive` envelope that
   says the person confirmed it — their own words now, not another thread's.
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from alpd.domain.conversation.delivery import clean_label
from alpd.errors import HandoffTooLarge, InvalidArgument

SUMMARY_MAX_BYTES: Final = 4 * 1024
#: what stands for a thread without a title in an envelope (never its id)
UNTITLED: Final = "an untitled thread"


@dataclass(frozen=True, slots=True)
class Artifact:
    path: str
    size: int
    sha256: str


def check_summary(summary: str) -> str:
    """The summary to send, or the error that says why it cannot be."""
    text = summary.strip()
    if not text:
        raise InvalidArgument("a handoff needs a summary: `alp handoff TARGET -- SUMMARY`")
    size = len(text.encode())
    if size > SUMMARY_MAX_BYTES:
        raise HandoffTooLarge(
            f"the summary is {size} bytes; a handoff carries at most {SUMMARY_MAX_BYTES}. "
            "Shorten it, and leave long material in a file passed with --artifact PATH",
            size=size,
            limit=SUMMARY_MAX_BYTES,
        )
    return text


def artifact_inside(path: str, roots: Sequence[str]) -> bool:
    """Is `path` (absolute, normalised) one of `roots` or below one?"""
    clean = posixpath.normpath(path)
    for root in roots:
        base = posixpath.normpath(root)
        if clean == base or clean.startswith(base.rstrip("/") + "/"):
            return True
    return False


def source_label(title: str | None) -> str:
    """How the envelope names the source thread: its title, never its id."""
    return title.strip() if title and title.strip() else UNTITLED


def handoff_text(summary: str, artifacts: Sequence[Artifact], source: str) -> str:
    """The delivered text (the envelope line is added by the delivery path)."""
    if not artifacts:
        return summary
    lines = [
        summary,
        "",
        f'Artifacts, left in the workspace of "{clean_label(source)}" (read them there; '
        "not copied):",
        *(f"- {a.path} ({a.size} bytes, sha256 {a.sha256})" for a in artifacts),
    ]
    return "\n".join(lines)


__all__ = [
    "SUMMARY_MAX_BYTES",
    "UNTITLED",
    "Artifact",
    "artifact_inside",
    "check_summary",
    "handoff_text",
    "source_label",
]
