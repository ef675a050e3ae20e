"""What the meaning index embeds: units of history, cut into chunks (pure).

Rules, in the order they apply:

* **Units.** A unit is a person's turn (one `user`/`prompt` entry) or a run of assistant text
  (the `assistant`/`reply` entries of one execution between two of the person's turns, joined
  by a blank line). Tool calls, tool output, system lines and errors are never embedded: they
  neither join a run nor end it. Copies (`copy_of`: no text of their own) are skipped; the
  original is embedded where it was first stored.
* **Growing runs.** A run still open at the end of what was read (a running execution) is
  extended by the next read: the store hands its text back as `OpenRun` and the new replies
  are appended, so a unit is never split by the moment a sync happened to run.
* **Bounded units.** A run stops growing at `MAX_UNIT_CHARS` characters; the next reply
  starts a new unit. So re-reading an open run (which the next read does) is bounded, and a
  long autonomous run is several units, not one blurred vector.
* **Chunks.** A unit's text is cut greedily into chunks of at most `MAX_CHUNK_CHARS`, at the
  last whitespace in the chunk's second half when there is one (else mid-word). Cutting is
  prefix-stable: appending text to a unit changes only its last chunk and adds new ones, so
  the chunks already embedded keep their digests and are not embedded again.
* **Digests.** A chunk is identified by the sha256 of its text (UTF-8): the same text in two
  places is embedded once per model.
"""

from __future__ import annotations

import bisect
import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "MAX_CHUNK_CHARS",
    "MAX_UNIT_CHARS",
    "RUN_SEPARATOR",
    "Chunk",
    "EntryText",
    "OpenRun",
    "UnitText",
    "chunk_spans",
    "chunk_unit",
    "cut_units",
    "unit_entry_texts",
]

#: a static model averages its tokens' vectors: a long chunk blurs into the average of
#: everything; ~800 characters is a paragraph or two
MAX_CHUNK_CHARS: Final = 800
MAX_UNIT_CHARS: Final = 16 * MAX_CHUNK_CHARS
RUN_SEPARATOR: Final = "\n\n"

UnitRole = Literal["user", "assistant"]


@dataclass(frozen=True, slots=True)
class EntryText:
    """One history entry, as the unit cutter needs it."""

    id: int
    execution_id: str
    role: str
    kind: str
    #: None for a copy (`copy_of`)
    text: str | None


@dataclass(frozen=True, slots=True)
class OpenRun:
    """An execution's last unit when it is a run of assistant text that may still grow."""

    unit_id: int
    execution_id: str
    first_entry: int
    last_entry: int
    #: its entries' texts, in order (re-read from the store)
    texts: tuple[tuple[int, str], ...]


@dataclass(slots=True)
class UnitText:
    """A unit as the cutter leaves it: new (`unit_id` None) or an open run it extended."""

    execution_id: str
    role: UnitRole
    first_entry: int
    last_entry: int
    unit_id: int | None = None
    #: (entry id, offset of its text in `text`), in order
    starts: list[tuple[int, int]] = field(default_factory=list)
    text: str = ""

    def add(self, entry_id: int, text: str) -> None:
        if self.starts:
            self.text += RUN_SEPARATOR
        self.starts.append((entry_id, len(self.text)))
        self.text += text
        self.last_entry = entry_id


@dataclass(frozen=True, slots=True)
class Chunk:
    seq: int
    #: the entry its text starts in
    entry_id: int
    start: int
    length: int
    digest: bytes
    text: str


def _opened(run: OpenRun) -> UnitText:
    unit = UnitText(
        execution_id=run.execution_id,
        role="assistant",
        first_entry=run.first_entry,
        last_entry=run.last_entry,
        unit_id=run.unit_id,
    )
    for entry_id, text in run.texts:
        unit.add(entry_id, text)
    return unit


def cut_units(
    entries: Iterable[EntryText], open_runs: dict[str, OpenRun]
) -> tuple[list[UnitText], dict[str, UnitText | None]]:
    """The units `entries` (in id order) make or extend, and for each execution seen whether
    its last unit is now an open run (to be handed back by the next read) or closed (None).

    Only units that changed are returned: new ones, and open runs that gained a reply.
    """
    changed: dict[int, UnitText] = {}
    current: dict[str, UnitText | None] = {}
    order = 0
    for entry in entries:
        execution = entry.execution_id
        if execution not in current:
            run = open_runs.get(execution)
            current[execution] = _opened(run) if run is not None else None
        if entry.text is None or not entry.text.strip():
            continue
        if entry.role == "user" and entry.kind == "prompt":
            unit = UnitText(execution, "user", entry.id, entry.id)
            unit.add(entry.id, entry.text)
            changed[order] = unit
            order += 1
            current[execution] = None
        elif entry.role == "assistant" and entry.kind == "reply":
            run_unit = current[execution]
            if run_unit is None or len(run_unit.text) >= MAX_UNIT_CHARS:
                run_unit = UnitText(execution, "assistant", entry.id, entry.id)
                current[execution] = run_unit
            run_unit.add(entry.id, entry.text)
            if all(unit is not run_unit for unit in changed.values()):
                changed[order] = run_unit
                order += 1
    return [changed[key] for key in sorted(changed)], current


def chunk_spans(text: str, limit: int = MAX_CHUNK_CHARS) -> list[tuple[int, int]]:
    """(start, end) of each chunk of `text` (prefix-stable: see the module docstring)."""
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(text):
        end = start + limit
        if end < len(text):
            half = start + limit // 2
            cut = max(text.rfind(" ", half, end), text.rfind("\n", half, end))
            if cut > start:
                end = cut + 1
        else:
            end = len(text)
        spans.append((start, end))
        start = end
    return spans


def chunk_unit(unit: UnitText, limit: int = MAX_CHUNK_CHARS) -> list[Chunk]:
    """The unit's chunks with their digests and the entry each starts in."""
    offsets = [offset for _, offset in unit.starts]
    chunks = []
    for seq, (start, end) in enumerate(chunk_spans(unit.text, limit)):
        text = unit.text[start:end]
        entry_id = unit.starts[max(0, bisect.bisect_right(offsets, start) - 1)][0]
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        chunks.append(Chunk(seq, entry_id, start, end - start, digest, text))
    return chunks


def unit_entry_texts(rows: Sequence[tuple[int, str | None]]) -> tuple[tuple[int, str], ...]:
    """An open run's entries as `OpenRun.texts` (empty texts dropped, as the cutter does)."""
    return tuple((entry_id, text) for entry_id, text in rows if text and text.strip())
