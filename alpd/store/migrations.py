"""Numbered schema migrations on `PRAGMA user_version`. Append only; never edit a shipped one.

Each migration is a tuple of statements applied, with the version bump, in one
`BEGIN IMMEDIATE … COMMIT`. A database whose version is newer than the last entry here was
written by a newer alpd and is refused (`DatabaseTooNew`).
"""

from __future__ import annotations

from typing import Final

V1_THREADS: Final = (
    """
    CREATE TABLE threads (
        id               TEXT PRIMARY KEY,
        owner_uid        INTEGER NOT NULL,
        title            TEXT,
        workspace        TEXT NOT NULL,
        status           TEXT NOT NULL CHECK (status IN ('open', 'closed', 'archived')),
        revision         INTEGER NOT NULL CHECK (revision >= 1),
        context_revision INTEGER NOT NULL DEFAULT 0,
        created_at       TEXT NOT NULL,
        updated_at       TEXT NOT NULL,
        closed_at        TEXT,
        archived_at      TEXT
    ) STRICT
    """,
    "CREATE INDEX threads_by_workspace ON threads (owner_uid, workspace, updated_at)",
    "CREATE INDEX threads_by_owner ON threads (owner_uid, updated_at)",
    # One row per revision of a thread: the audit trail of every write (revision n is the
    # n-th write), and the reason a lost update cannot hide (PRIMARY KEY refuses a twin).
    """
    CREATE TABLE thread_revisions (
        thread_id  TEXT NOT NULL REFERENCES threads (id),
        revision   INTEGER NOT NULL,
        change     TEXT NOT NULL,
        at         TEXT NOT NULL,
        detail     TEXT,
        PRIMARY KEY (thread_id, revision)
    ) STRICT, WITHOUT ROWID
    """,
)

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (V1_THREADS,)

LATEST_VERSION: Final = len(MIGRATIONS)
