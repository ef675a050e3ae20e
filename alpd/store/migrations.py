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

# Executions, immutable policies, digest-chained snapshots and checkpoints (issue 3).
V2_EXECUTIONS: Final = (
    """
    CREATE TABLE executions (
        id                TEXT PRIMARY KEY,
        owner_uid         INTEGER NOT NULL,
        thread_id         TEXT REFERENCES threads (id),
        is_root           INTEGER NOT NULL CHECK (is_root IN (0, 1)),
        root_id           TEXT NOT NULL,
        parent_id         TEXT REFERENCES executions (id),
        sequence          INTEGER,
        runtime           TEXT NOT NULL,
        agent             TEXT NOT NULL,
        kind              TEXT NOT NULL,
        origin            TEXT NOT NULL,
        headless          INTEGER NOT NULL,
        status            TEXT NOT NULL CHECK (status IN ('reserved', 'running', 'settled')),
        outcome           TEXT
            CHECK (outcome IN ('completed', 'failed', 'cancelled', 'interrupted')),
        exit_code         INTEGER,
        summary           TEXT,
        policy            BLOB NOT NULL,
        policy_hash       TEXT NOT NULL,
        context_revision  INTEGER,
        context_digest    TEXT,
        cwd               TEXT NOT NULL,
        exec_dir          TEXT NOT NULL,
        launcher_pid      INTEGER,
        pid               INTEGER,
        pid_start_time    REAL,
        boot_id           TEXT,
        native_session_id TEXT,
        transcript_path   TEXT,
        usage             TEXT,
        cost_usd          REAL,
        output_tail       TEXT,
        history_level     TEXT,
        history_skipped   INTEGER NOT NULL DEFAULT 0,
        created_at        TEXT NOT NULL,
        started_at        TEXT,
        settled_at        TEXT,
        UNIQUE (thread_id, sequence)
    ) STRICT
    """,
    # Invariant 4, held by the database itself: one unsettled root per thread.
    """
    CREATE UNIQUE INDEX one_unsettled_root ON executions (thread_id)
        WHERE is_root = 1 AND status != 'settled'
    """,
    "CREATE INDEX executions_by_root ON executions (root_id)",
    "CREATE INDEX executions_unsettled ON executions (status) WHERE status != 'settled'",
    """
    CREATE TRIGGER executions_policy_immutable BEFORE UPDATE OF policy, policy_hash,
        context_revision, context_digest, thread_id, root_id ON executions
    BEGIN SELECT RAISE(ABORT, 'an execution policy and binding are immutable'); END
    """,
    """
    CREATE TABLE snapshots (
        thread_id       TEXT NOT NULL REFERENCES threads (id),
        revision        INTEGER NOT NULL,
        body            BLOB NOT NULL,
        digest          TEXT NOT NULL,
        previous_digest TEXT,
        created_at      TEXT NOT NULL,
        PRIMARY KEY (thread_id, revision)
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TRIGGER snapshots_no_update BEFORE UPDATE ON snapshots
    BEGIN SELECT RAISE(ABORT, 'snapshots are immutable'); END
    """,
    """
    CREATE TRIGGER snapshots_no_delete BEFORE DELETE ON snapshots
    BEGIN SELECT RAISE(ABORT, 'snapshots are immutable'); END
    """,
    """
    CREATE TABLE checkpoints (
        execution_id TEXT PRIMARY KEY REFERENCES executions (id),
        body         BLOB NOT NULL,
        digest       TEXT NOT NULL,
        updated_at   TEXT NOT NULL
    ) STRICT, WITHOUT ROWID
    """,
)

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (V1_THREADS, V2_EXECUTIONS)

LATEST_VERSION: Final = len(MIGRATIONS)
