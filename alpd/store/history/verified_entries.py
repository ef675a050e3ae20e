"""The digest check of history entries read by position, remembered (`VERIFIED_ENTRIES`).

An entry is read as `ENTRY_READ_SQL` lays it out — its id, its stored digest, the digests'
start (`history_digests.since`), then its `DIGESTED_COLUMNS` in order — and checked with
`check_entry_digest` (HISTORY_ENTRY_TAMPERED). The check is remembered per entry id with
that whole read (`alpd.domain.verified_reads`): an entry read again with every value the same
is not hashed again, and one changed in any column read — the digest included — is checked
afresh. Equal values are equal bytes here: `history_entries` is STRICT (an INTEGER column
holds no 1.0 to compare equal to 1), and PostgreSQL's columns are typed.
"""

from __future__ import annotations

from typing import Any, Final

from alpd.domain.verified_reads import VerifiedReads
from alpd.store.entry_rows import DIGESTED_COLUMNS
from alpd.store.history.search import STORED_COLUMNS_SQL, check_entry_digest

__all__ = ["ENTRY_READ_SQL", "ENTRY_READ_WIDTH", "VERIFIED_ENTRIES", "VERIFIED_ENTRIES_WEIGHT"]

#: an entry `h` as it is checked: id, digest, the digests' start, its digested columns
ENTRY_READ_SQL: Final = (
    "h.id AS entry_id, h.digest, (SELECT since FROM history_digests) AS digests_since, "
    + STORED_COLUMNS_SQL
)
#: the columns of one read (`ENTRY_READ_SQL`)
ENTRY_READ_WIDTH: Final = 3 + len(DIGESTED_COLUMNS)
#: characters of verified entries remembered (each read counted as its strings and 64 a
#: column): some 10,000 short entries, 2,000 with a 2 KiB output tail
VERIFIED_ENTRIES_WEIGHT: Final = 4 << 20


def _check(read: tuple[Any, ...]) -> None:
    # DIGESTED_COLUMNS[0] is the execution id: the stored columns start at 3
    check_entry_digest(read[0], read[3], read[1], read[2], read[3:])


def _weight(read: tuple[Any, ...]) -> int:
    return 64 * len(read) + sum(len(value) for value in read if isinstance(value, str))


assert DIGESTED_COLUMNS[0] == "execution_id"

#: `check_entry_digest` of an entry read (`ENTRY_READ_WIDTH` values, by entry id)
VERIFIED_ENTRIES: VerifiedReads[int, tuple[Any, ...], None] = VerifiedReads(
    _check, _weight, VERIFIED_ENTRIES_WEIGHT
)
