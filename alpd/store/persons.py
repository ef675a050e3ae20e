"""SQL over `persons`: the number a person's rows are owned by (`owner_uid`), kept once per
person so every host maps its local uid to it (docs/many-machines.md, "One person across
hosts"). On PostgreSQL the table is bound to the role like every other
(`alpd.store.postgres.persons`): a role sees its own person's row only, while the unique
`uid` still keeps two persons' numbers apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from alpd.store.db import Tx, dialect_of

__all__ = ["claim_person", "database_role", "ensure_person_rows"]


async def database_role(tx: Tx) -> str | None:
    """The role this alpd connects as (PostgreSQL), None on SQLite (no roles)."""
    if dialect_of(tx) != "postgres":
        return None
    async with tx.execute("SELECT current_user") as cursor:
        row = await cursor.fetchone()
    return None if row is None else str(row[0])


async def claim_person(tx: Tx, name: str, candidates: Sequence[int], at: str) -> int | None:
    """The number of person `name`: the one kept, else the first of `candidates` no other
    person has (now kept as theirs); None when every candidate is taken."""
    async with tx.execute("SELECT uid FROM persons WHERE name = ?", (name,)) as cursor:
        row = await cursor.fetchone()
    if row is not None:
        return int(row[0])
    for uid in candidates:
        async with tx.execute(
            "INSERT OR IGNORE INTO persons (name, uid, registered_at) VALUES (?, ?, ?)",
            (name, uid, at),
        ) as inserted:
            if inserted.rowcount == 1:
                return uid
    return None


async def ensure_person_rows(tx: Tx) -> None:
    """The rows each person has one of: the meaning index's cursor. SQLite's was made with
    the table (one person); on PostgreSQL each role makes its own."""
    async with tx.execute(
        'INSERT OR IGNORE INTO search_index_cursor ("only", entry_id) VALUES (1, 0)'
    ):
        pass
