"""What the history stores of one entry, computed where the entry is parsed (pure).

`entry_row` gives the row the writer inserts (`alpd.store.history.entries.insert_entries`): the
entry's digest (`entry_content` / `entry_digest`, over its `DIGESTED_COLUMNS`), its body
folded for the word index when folding changes it (`fold_text`), and whether it goes to the
trigram index too (`has_cjk`). Kept apart from the writer's SQL so the transcript reader
process (`alpd.services.history.read_worker`) builds rows without loading the store.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Final

import msgspec

__all__ = [
    "DIGESTED_COLUMNS",
    "ROW_COLUMNS",
    "EntryRow",
    "Value",
    "entry_content",
    "entry_digest",
    "entry_row",
    "fold_text",
    "has_cjk",
    "row_of",
]

# Letters with no Unicode decomposition, which `remove_diacritics` therefore keeps.
_FOLD: Final = str.maketrans(
    {
        "đ": "d",
        "Đ": "D",
        "ł": "l",
        "Ł": "L",
        "ø": "o",
        "Ø": "O",
        "ħ": "h",
        "Ħ": "H",
        "ŧ": "t",
        "Ŧ": "T",
        "ı": "i",
        "ƀ": "b",
        "ɨ": "i",
        "ʉ": "u",
        "ð": "d",
        "Ð": "D",
    }
)

_CJK: Final = re.compile(
    "[\u0e00-\u0eff\u1000-\u109f\u1100-\u11ff\u1780-\u17ff\u3040-\u30ff\u3130-\u318f"
    "\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002ffff]"
)


_FOLDABLE: Final = re.compile("[" + "".join(chr(code) for code in _FOLD) + "]")


def fold_text(text: str | None) -> str:
    """``text`` with the undecomposable diacritic letters mapped to their base letter."""
    if not text or text.isascii():
        return text or ""
    # str.translate costs ~38 ns a character once a text holds any non-ASCII character (an
    # output tail's leading "…" is enough); the regex scan that rules it out runs in C.
    if _FOLDABLE.search(text) is None:
        return text
    return text.translate(_FOLD)


def has_cjk(text: str | None) -> bool:
    """Whether ``text`` holds a character of a script written without spaces between words."""
    if not text or text.isascii():
        return False
    return _CJK.search(text) is not None


#: the stored columns of an entry its digest covers, in this order
DIGESTED_COLUMNS: Final = (
    "execution_id", "native_id", "role", "kind", "text", "tool_name", "tool_input",
    "output_tail", "output_sha256", "ts", "model", "usage", "call_id", "is_error",
    "byte_offset", "copy_of",
)  # fmt: skip

Value = str | int | None


def entry_content(values: Sequence[Value]) -> bytes:
    """An entry's digested content: the JSON array of its `DIGESTED_COLUMNS` values in UTF-8,
    written as SQLite's ``json_array`` writes it (compact, non-ASCII as is, the same escapes),
    which is what digested the entries written before the digest moved to the parse side.
    msgspec writes that text ~10x faster than the json module."""
    return msgspec.json.encode(values)


def entry_digest(content: bytes) -> str:
    """`sha256:<hex>` of an entry's content (`entry_content`)."""
    return "sha256:" + hashlib.sha256(content).hexdigest()


#: what a row binds, in this order: every digested column but `copy_of`, then the digest
ROW_COLUMNS: Final = (*DIGESTED_COLUMNS[:-1], "digest")
assert ROW_COLUMNS[:2] == ("execution_id", "native_id")  # `EntryRow.key`
_TEXT, _TOOL_NAME, _TOOL_INPUT, _OUTPUT_TAIL = (
    ROW_COLUMNS.index(column) for column in ("text", "tool_name", "tool_input", "output_tail")
)


class EntryRow(msgspec.Struct, frozen=True, array_like=True):
    """An entry ready to insert, with what the writer needs computed beside it (array-like
    and positional: it travels from the reader process by the thousand)."""

    #: the values of `ROW_COLUMNS`, the digest of the entry stored whole among them
    values: tuple[Value, ...]
    #: the indexed body folded (`fold_text`), when folding changes it
    folded: str | None
    cjk: bool

    @property
    def key(self) -> tuple[str, str]:
        """(execution_id, native_id), which identify the entry."""
        return str(self.values[0]), str(self.values[1])

    @property
    def params(self) -> dict[str, Value]:
        """The values by column name (`INSERT_ENTRY`'s named parameters)."""
        return dict(zip(ROW_COLUMNS, self.values, strict=True))


def entry_row(params: dict[str, Value]) -> EntryRow:
    """`params` (every digested column but `copy_of`) with its digest, its folded body and
    its CJK routing (pure; runs where the entry is parsed)."""
    return row_of([params[column] for column in DIGESTED_COLUMNS[:-1]])


def row_of(values: list[Value]) -> EntryRow:
    """`entry_row` of the values of every digested column but `copy_of`, in their order."""
    digest = entry_digest(entry_content([*values, None]))
    body = (
        f"{values[_TEXT] or ''}\n{values[_TOOL_NAME] or ''}\n"
        f"{values[_TOOL_INPUT] or ''}\n{values[_OUTPUT_TAIL] or ''}"
    )
    folded = fold_text(body)
    return EntryRow((*values, digest), folded if folded is not body else None, has_cjk(body))
