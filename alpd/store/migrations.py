"""Numbered schema migrations on `PRAGMA user_version`. Append only; never edit a shipped one.

Each migration is a tuple of statements applied, with the version bump, in one
`BEGIN IMMEDIATE … COMMIT`. A database whose version is newer than the last entry here was
written by a newer alpd and is refused (`DatabaseTooNew`).
"""

# long: the schema's whole history, one constant a migration, in the order applied; splitting
# it would scatter what a reader needs side by side to see what a table looks like today.

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

# History copies of the runtimes' transcripts and their search index (issue 5; see
# docs/history.md). Entries are keyed by (native_id, execution_id): re-reading a transcript
# inserts nothing twice, and the native_id-first order also finds an entry's earlier copy in
# another execution (a Claude fork copies its parent's lines with their uuids), which is
# kept as a row pointing at the original (`copy_of`) and is not indexed a second time.
# The FTS tables index `search_docs`, a view over entries (rowid = entry id) and thread
# documents (negative ids, so one rowid space holds both), fed folded text: entries by one
# set-based INSERT per batch (`alpd.store.history.entries.insert_entries`, folded where they were
# parsed), thread documents by triggers calling the writer's `alp_fold` / `alp_has_cjk`
# functions (a trigger per entry made FTS5 flush its pending terms
# at every row's statement savepoint, 4-5x slower), thread documents by triggers. Never run
# the FTS 'rebuild' command: it would index unfolded text.
V3_HISTORY: Final = (
    """
    CREATE TABLE history_entries (
        id            INTEGER PRIMARY KEY,
        execution_id  TEXT NOT NULL REFERENCES executions (id),
        native_id     TEXT NOT NULL,
        role          TEXT NOT NULL,
        kind          TEXT NOT NULL,
        text          TEXT,
        tool_name     TEXT,
        tool_input    TEXT,
        output_tail   TEXT,
        output_sha256 TEXT,
        ts            TEXT,
        model         TEXT,
        usage         TEXT,
        call_id       TEXT,
        is_error      INTEGER NOT NULL DEFAULT 0,
        byte_offset   INTEGER NOT NULL,
        copy_of       INTEGER,
        UNIQUE (native_id, execution_id)
    ) STRICT
    """,
    "CREATE INDEX history_by_execution ON history_entries (execution_id, id)",
    # One per execution whose transcript is (being) copied: where the next read starts and
    # what the reader carries between reads. Written in the same transaction as the rows.
    """
    CREATE TABLE history_cursors (
        execution_id  TEXT PRIMARY KEY REFERENCES executions (id),
        path          TEXT NOT NULL,
        format        TEXT NOT NULL CHECK (format IN ('claude', 'codex')),
        consumed      INTEGER NOT NULL,
        session_id    TEXT,
        model         TEXT,
        skipped       INTEGER NOT NULL DEFAULT 0,
        redactions    INTEGER NOT NULL DEFAULT 0,
        usage         TEXT,
        cost_usd      REAL,
        links_to      TEXT REFERENCES executions (id),
        link_kind     TEXT CHECK (link_kind IN ('resume', 'fork')),
        updated_at    TEXT NOT NULL
    ) STRICT, WITHOUT ROWID
    """,
    "CREATE INDEX history_cursors_by_path ON history_cursors (path, consumed)",
    "CREATE INDEX executions_by_native_session ON executions (native_session_id, created_at)",
    """
    CREATE TABLE thread_docs (
        id         INTEGER PRIMARY KEY CHECK (id < 0),
        thread_id  TEXT NOT NULL UNIQUE REFERENCES threads (id),
        title      TEXT,
        context    TEXT,
        source     TEXT NOT NULL
    ) STRICT
    """,
    """
    CREATE VIEW search_docs (id, body) AS
        SELECT id, coalesce(text, '') || char(10) || coalesce(tool_name, '') || char(10)
            || coalesce(tool_input, '') || char(10) || coalesce(output_tail, '')
        FROM history_entries
        UNION ALL
        SELECT id, coalesce(title, '') || char(10) || coalesce(context, '') FROM thread_docs
    """,
    """
    CREATE VIRTUAL TABLE search_words USING fts5 (
        body, content = 'search_docs', content_rowid = 'id',
        tokenize = 'unicode61 remove_diacritics 2'
    )
    """,
    """
    CREATE VIRTUAL TABLE search_cjk USING fts5 (
        body, content = 'search_docs', content_rowid = 'id', tokenize = 'trigram'
    )
    """,
    # The rowids of documents in the trigram index, so a query too short for trigrams
    # (< 3 characters) scans only them with LIKE.
    "CREATE TABLE cjk_docs (id INTEGER PRIMARY KEY) STRICT",
    """
    CREATE TRIGGER history_entries_immutable BEFORE UPDATE ON history_entries
    BEGIN SELECT RAISE(ABORT, 'history entries are immutable'); END
    """,
    """
    CREATE TRIGGER thread_docs_inserted AFTER INSERT ON thread_docs
    BEGIN
        INSERT INTO search_words (rowid, body) VALUES (new.id, alp_fold(
            coalesce(new.title, '') || char(10) || coalesce(new.context, '')));
        INSERT INTO cjk_docs (id) SELECT new.id WHERE alp_has_cjk(
            coalesce(new.title, '') || char(10) || coalesce(new.context, ''));
        INSERT INTO search_cjk (rowid, body) SELECT new.id,
            coalesce(new.title, '') || char(10) || coalesce(new.context, '')
        WHERE EXISTS (SELECT 1 FROM cjk_docs WHERE id = new.id);
    END
    """,
    """
    CREATE TRIGGER thread_docs_deleted AFTER DELETE ON thread_docs
    BEGIN
        INSERT INTO search_words (search_words, rowid, body) VALUES ('delete', old.id,
            alp_fold(coalesce(old.title, '') || char(10) || coalesce(old.context, '')));
        INSERT INTO search_cjk (search_cjk, rowid, body) SELECT 'delete', old.id,
            coalesce(old.title, '') || char(10) || coalesce(old.context, '')
        WHERE EXISTS (SELECT 1 FROM cjk_docs WHERE id = old.id);
        DELETE FROM cjk_docs WHERE id = old.id;
    END
    """,
    """
    CREATE TRIGGER thread_docs_no_update BEFORE UPDATE ON thread_docs
    BEGIN SELECT RAISE(ABORT, 'replace a thread document: delete, then insert'); END
    """,
)

# FTS5 merges index segments 16 at a time instead of 4: fewer, larger merges while history
# is written (bench: inserts ~18% faster), for slightly more segments per query.
V4_FTS_MERGE: Final = (
    "INSERT INTO search_words (search_words, rank) VALUES ('automerge', 16)",
    "INSERT INTO search_cjk (search_cjk, rank) VALUES ('automerge', 16)",
)

# The full record of every compaction (every dropped and truncated line), beside the
# snapshot whose bounded copy lists only the first few; immutable like the snapshots.
V5_COMPACTIONS: Final = (
    """
    CREATE TABLE compactions (
        thread_id  TEXT NOT NULL,
        revision   INTEGER NOT NULL,
        body       BLOB NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (thread_id, revision),
        FOREIGN KEY (thread_id, revision) REFERENCES snapshots (thread_id, revision)
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TRIGGER compactions_no_update BEFORE UPDATE ON compactions
    BEGIN SELECT RAISE(ABORT, 'compaction records are immutable'); END
    """,
    """
    CREATE TRIGGER compactions_no_delete BEFORE DELETE ON compactions
    BEGIN SELECT RAISE(ABORT, 'compaction records are immutable'); END
    """,
)

# A digest per history entry (`alpd.store.entry_rows.entry_content`), checked when an entry is
# read back. Entries written before this migration have none: `history_digests.since` is
# the first id that must, so clearing a digest cannot pass for an old entry.
V6_ENTRY_DIGESTS: Final = (
    "ALTER TABLE history_entries ADD COLUMN digest TEXT",
    "CREATE TABLE history_digests (since INTEGER NOT NULL) STRICT",
    "INSERT INTO history_digests (since) SELECT coalesce(max(id), 0) + 1 FROM history_entries",
    """
    CREATE TRIGGER history_entries_need_a_digest BEFORE INSERT ON history_entries
    WHEN new.digest IS NULL
    BEGIN SELECT RAISE(ABORT, 'a history entry needs its digest'); END
    """,
    """
    CREATE TRIGGER history_digests_immutable BEFORE UPDATE ON history_digests
    BEGIN SELECT RAISE(ABORT, 'history_digests is immutable'); END
    """,
)

# Deliveries to a thread (pushes, scheduled fires, sub-agent results, handoffs), in arrival
# order: `queued` until a round takes them (`delivered`, with the root that took them, in the
# same transaction that reserves that root: a delivery is never taken twice), a live run
# takes them (`injected`), or they can never run (`failed`, with the reason). The partial
# unique index makes "at most one queued delivery per coalescing key" (a busy thread's
# schedule fire is queued once, not stacked) a property of the database.
V7_DELIVERIES: Final = (
    """
    CREATE TABLE deliveries (
        id                  INTEGER PRIMARY KEY,
        thread_id           TEXT NOT NULL REFERENCES threads (id),
        owner_uid           INTEGER NOT NULL,
        kind                TEXT NOT NULL,
        agent               TEXT NOT NULL,
        origin              TEXT NOT NULL,
        source_kind         TEXT NOT NULL,
        source              TEXT NOT NULL,
        envelope            TEXT NOT NULL,
        text                TEXT NOT NULL,
        notify              INTEGER NOT NULL DEFAULT 0,
        target_execution_id TEXT REFERENCES executions (id),
        coalesce_key        TEXT,
        status              TEXT NOT NULL
                            CHECK (status IN ('queued', 'delivered', 'injected', 'failed')),
        execution_id        TEXT REFERENCES executions (id),
        error               TEXT,
        created_at          TEXT NOT NULL,
        delivered_at        TEXT
    ) STRICT
    """,
    "CREATE INDEX deliveries_queued ON deliveries (thread_id, id) WHERE status = 'queued'",
    "CREATE INDEX deliveries_by_execution ON deliveries (execution_id)",
    """
    CREATE UNIQUE INDEX deliveries_coalesced ON deliveries (thread_id, coalesce_key)
    WHERE status = 'queued' AND coalesce_key IS NOT NULL
    """,
)

# One report per execution that no person watched (every non-interactive root, every
# sub-agent): what ended how, its final message (secret-filtered), cost and duration.
V8_REPORTS: Final = (
    """
    CREATE TABLE reports (
        id                  INTEGER PRIMARY KEY,
        thread_id           TEXT NOT NULL REFERENCES threads (id),
        owner_uid           INTEGER NOT NULL,
        execution_id        TEXT NOT NULL UNIQUE REFERENCES executions (id),
        kind                TEXT NOT NULL,
        agent               TEXT NOT NULL,
        runtime             TEXT NOT NULL,
        origin              TEXT NOT NULL,
        outcome             TEXT NOT NULL,
        message             TEXT NOT NULL,
        message_source      TEXT NOT NULL CHECK (message_source IN ('transcript', 'output')),
        redactions          INTEGER NOT NULL DEFAULT 0,
        cost_usd            REAL,
        duration_seconds    REAL,
        usage               TEXT,
        notify              INTEGER NOT NULL DEFAULT 0,
        parent_execution_id TEXT REFERENCES executions (id),
        created_at          TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX reports_by_thread ON reports (thread_id, id)",
    "CREATE INDEX reports_by_owner ON reports (owner_uid, created_at)",
)

# Schedules (issue 10; alpd/domain/schedules/plan.py has the planning rules). `accounted_until`:
# every fire time at or before it has been dealt with (run, queued, coalesced or skipped), so
# a restart plans from there and never fires one twice. `firing_at`/`firing_missed`: a fire
# recorded in the same transaction that advanced `accounted_until`, whose delivery is not
# confirmed yet; after a crash it is delivered unless a delivery for it already exists.
# Runs are found by their origin (`scheduleId`), through the expression index.
V9_SCHEDULES: Final = (
    """
    CREATE TABLE schedules (
        id              TEXT PRIMARY KEY,
        owner_uid       INTEGER NOT NULL,
        thread_id       TEXT NOT NULL REFERENCES threads (id),
        rule            TEXT NOT NULL CHECK (rule IN ('cron', 'every', 'at')),
        expression      TEXT NOT NULL,
        timezone        TEXT NOT NULL,
        anchor_at       TEXT NOT NULL,
        prompt          TEXT NOT NULL,
        agent           TEXT,
        runtime         TEXT,
        notify          INTEGER NOT NULL DEFAULT 0,
        catch_up        TEXT NOT NULL CHECK (catch_up IN ('one', 'none')),
        status          TEXT NOT NULL CHECK (status IN ('active', 'paused', 'stopped', 'done')),
        stop_reason     TEXT,
        accounted_until TEXT NOT NULL,
        next_fire_at    TEXT,
        firing_at       TEXT,
        firing_missed   INTEGER NOT NULL DEFAULT 0,
        last_fire_at    TEXT,
        runs            INTEGER NOT NULL DEFAULT 0,
        missed          INTEGER NOT NULL DEFAULT 0,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL
    ) STRICT
    """,
    "CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE status = 'active'",
    "CREATE INDEX schedules_by_owner ON schedules (owner_uid, thread_id)",
    """
    CREATE INDEX executions_by_schedule ON executions (json_extract(origin, '$.scheduleId'))
        WHERE kind = 'scheduled'
    """,
    # activity/list: the caller's executions, newest first
    "CREATE INDEX executions_by_owner ON executions (owner_uid, created_at)",
)

# Handoffs between threads (issue 12; the guards' rules are alpd/domain/conversation/guards.py).
# A row is written when a send reserves its slot, in the transaction that read the pair's
# slots, so two simultaneous sends cannot both see room; `slot` is then committed (the
# delivery was stored, or the directive reached the inbox) or released (it failed).
# `reserved_at` is the guards' clock (seconds since the epoch); `holder` the daemon instance
# that reserved it (an abandoned reservation is one whose holder died). `delivery_id` links
# the delivery that carried it: how, when and into which execution it arrived are there.
V10_HANDOFFS: Final = (
    """
    CREATE TABLE handoffs (
        id                  TEXT PRIMARY KEY,
        owner_uid           INTEGER NOT NULL,
        source_thread_id    TEXT NOT NULL REFERENCES threads (id),
        source_execution_id TEXT REFERENCES executions (id),
        target_thread_id    TEXT NOT NULL REFERENCES threads (id),
        summary             TEXT NOT NULL,
        artifacts           TEXT NOT NULL,
        directive           INTEGER NOT NULL CHECK (directive IN (0, 1)),
        chain_id            TEXT NOT NULL,
        hop                 INTEGER NOT NULL CHECK (hop >= 1),
        slot                TEXT NOT NULL CHECK (slot IN ('reserved', 'committed', 'released')),
        reserved_at         REAL NOT NULL,
        holder              TEXT NOT NULL,
        status              TEXT NOT NULL CHECK (status IN
                                ('sending', 'sent', 'inbox', 'confirmed', 'dismissed', 'failed')),
        path                TEXT CHECK (path IN ('wake', 'queue', 'inbox')),
        delivery_id         INTEGER REFERENCES deliveries (id),
        error               TEXT,
        created_at          TEXT NOT NULL,
        decided_at          TEXT
    ) STRICT
    """,
    "CREATE INDEX handoffs_by_pair ON handoffs (source_thread_id, target_thread_id, reserved_at)",
    "CREATE INDEX handoffs_by_target ON handoffs (target_thread_id, created_at)",
    "CREATE INDEX handoffs_by_chain ON handoffs (chain_id, reserved_at)",
    "CREATE INDEX handoffs_by_delivery ON handoffs (delivery_id) WHERE delivery_id IS NOT NULL",
    "CREATE INDEX handoffs_inbox ON handoffs (owner_uid, target_thread_id) WHERE status = 'inbox'",
)

# How each delivery travelled (issue 12's inject path): the path chosen at submit (`route`:
# inject, queue or wake) and the one that delivered it (`how`); the lease a live run's hook
# holds between hand-out and acknowledgement; and `note`, the recorded reason when a delivery
# fell back (a lease never acknowledged, a round whose root never started).
V11_DELIVERY_PATHS: Final = (
    "ALTER TABLE deliveries ADD COLUMN route TEXT",
    "ALTER TABLE deliveries ADD COLUMN how TEXT",
    "ALTER TABLE deliveries ADD COLUMN lease_execution_id TEXT REFERENCES executions (id)",
    "ALTER TABLE deliveries ADD COLUMN lease_until TEXT",
    "ALTER TABLE deliveries ADD COLUMN note TEXT",
)

# Clear and undo (issue 11; rules in alpd/domain/threads/steering.py). One row per context
# revision a person wrote instead of a settling root: `clear` (an empty working context) or
# `undo` (the content of `restored_revision`, taking back root `execution_id`'s
# contribution). Immutable like the snapshots; a root is undone at most once (partial unique
# index). History entries are never edited: their labels (`before-clear`, `undone`) are read
# through these rows.
V12_CONTEXT_STEPS: Final = (
    """
    CREATE TABLE context_steps (
        thread_id         TEXT NOT NULL REFERENCES threads (id),
        revision          INTEGER NOT NULL,
        kind              TEXT NOT NULL CHECK (kind IN ('clear', 'undo')),
        replaced_revision INTEGER NOT NULL CHECK (replaced_revision = revision - 1),
        restored_revision INTEGER,
        execution_id      TEXT REFERENCES executions (id),
        requested_by      TEXT NOT NULL,
        door              TEXT NOT NULL,
        at                TEXT NOT NULL,
        PRIMARY KEY (thread_id, revision),
        CHECK ((kind = 'undo') = (execution_id IS NOT NULL)),
        CHECK ((kind = 'undo') = (restored_revision IS NOT NULL))
    ) STRICT, WITHOUT ROWID
    """,
    "CREATE UNIQUE INDEX context_steps_one_undo_per_root ON context_steps (execution_id) "
    "WHERE kind = 'undo'",
    """
    CREATE TRIGGER context_steps_no_update BEFORE UPDATE ON context_steps
    BEGIN SELECT RAISE(ABORT, 'context steps are immutable'); END
    """,
    """
    CREATE TRIGGER context_steps_no_delete BEFORE DELETE ON context_steps
    BEGIN SELECT RAISE(ABORT, 'context steps are immutable'); END
    """,
)

# Recaps (alpd/domain/recap/summary.py): the last valid recap of each thread, replaced by each
# successful refresh (a derived view, not a record: the temp executions that made them are
# the record), and what each root was given besides its pinned context — the recap's source
# revision and a digest of the derived sections — so a run can be audited. `recap_entry_id`:
# the largest history entry id the recap has read; the next refresh reads after it.
V13_RECAPS: Final = (
    """
    CREATE TABLE recaps (
        thread_id       TEXT PRIMARY KEY REFERENCES threads (id),
        headline        TEXT NOT NULL,
        gist            TEXT NOT NULL,
        open_tasks      TEXT NOT NULL,
        source_revision INTEGER NOT NULL,
        recap_entry_id  INTEGER NOT NULL,
        roots           INTEGER NOT NULL,
        execution_id    TEXT NOT NULL REFERENCES executions (id),
        digest          TEXT NOT NULL,
        made_at         TEXT NOT NULL
    ) STRICT
    """,
    """
    CREATE TABLE root_derived (
        execution_id    TEXT PRIMARY KEY REFERENCES executions (id),
        recap_revision  INTEGER,
        recap_made_at   TEXT,
        recap_digest    TEXT,
        tail_from       TEXT REFERENCES executions (id),
        digest          TEXT NOT NULL,
        chars           INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TRIGGER root_derived_immutable BEFORE UPDATE ON root_derived
    BEGIN SELECT RAISE(ABORT, 'what a root was given is immutable'); END
    """,
)

# The recap's back-off (alpd/domain/recap/gate.py), kept beside its recap so a restart does
# not retry at once: the failed refreshes of a thread in a row and when the last one failed.
# A row exists only while the count is above 0; a successful refresh deletes it.
V14_RECAP_FAILURES: Final = (
    """
    CREATE TABLE recap_failures (
        thread_id TEXT PRIMARY KEY REFERENCES threads (id),
        failures  INTEGER NOT NULL CHECK (failures > 0),
        failed_at TEXT NOT NULL
    ) STRICT, WITHOUT ROWID
    """,
)

# A digest of what the history sync read of a transcript, up to its cursor
# (alpd/services/history/chunks.py, prefix_digest): a resume checks it first, and a file whose
# earlier bytes changed (a complete copy over a damaged one) is read again from its start.
# NULL for cursors written before it: those resume as they did.
V15_CURSOR_PREFIX: Final = ("ALTER TABLE history_cursors ADD COLUMN prefix_digest TEXT",)

# An execution's row holds its policy (and its binding to the context it read): V2 refuses an
# UPDATE of those columns, but a DELETE took the policy with the row. Nothing in alpd deletes
# an execution; now the store refuses it, like the snapshots, compactions and context steps
# refuse UPDATE and DELETE (tests/integration/threads/test_immutable_records.py tries each).
V16_EXECUTIONS_NO_DELETE: Final = (
    """
    CREATE TRIGGER executions_no_delete BEFORE DELETE ON executions
    BEGIN SELECT RAISE(ABORT, 'an execution and its policy are immutable'); END
    """,
)

# Pushes sent from inside a run obey the handoffs' loop guards (issue 21; rules in
# alpd/domain/conversation/guards.py): such a delivery records the thread it came from, the
# chain it continues and its hop, and when it was sent on the guards' clock (epoch seconds).
# The pair's pushes in the window count against the pair's quota; the chain's last send ends
# a quiet chain. Rows of pushes by a person keep them NULL.
V17_PUSH_CHAINS: Final = (
    "ALTER TABLE deliveries ADD COLUMN from_thread_id TEXT REFERENCES threads (id)",
    "ALTER TABLE deliveries ADD COLUMN chain_id TEXT",
    "ALTER TABLE deliveries ADD COLUMN hop INTEGER",
    "ALTER TABLE deliveries ADD COLUMN sent_at REAL",
    """
    CREATE INDEX deliveries_pair ON deliveries (from_thread_id, thread_id, sent_at)
    WHERE from_thread_id IS NOT NULL
    """,
    "CREATE INDEX deliveries_chain ON deliveries (chain_id) WHERE chain_id IS NOT NULL",
)

#: `PRAGMA application_id` of alp's databases ("alpd" in ASCII). A SQLite file at alp.db
#: with another one, or without one and without alp's tables, is someone else's: refused at
#: open, never adopted (a database of alp's from before V18 is recognised by its tables)
APPLICATION_ID: Final = 0x616C7064

V18_APPLICATION_ID = (f"PRAGMA application_id = {APPLICATION_ID}",)
# The meaning index (docs/search.md): the units of history embedded for search by meaning —
# a person's turn, or a run of assistant text between two turns (tool output never) — cut
# into chunks, each with the sha256 of its text; the vectors of every fingerprinted
# generation (model) keyed by that digest, so a text is embedded once per model; and where
# the background builder stands (`search_index_cursor`: the last history entry cut into
# units; a generation's `embedded_through`: the last chunk embedded). All derived from
# history_entries: dropping these tables loses nothing but the time to rebuild them.
V19_MEANING_INDEX: Final = (
    """
    CREATE TABLE search_units (
        id           INTEGER PRIMARY KEY,
        execution_id TEXT NOT NULL REFERENCES executions (id),
        role         TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        first_entry  INTEGER NOT NULL,
        last_entry   INTEGER NOT NULL,
        chars        INTEGER NOT NULL
    ) STRICT
    """,
    "CREATE INDEX search_units_by_execution ON search_units (execution_id, first_entry)",
    """
    CREATE TABLE search_chunks (
        id       INTEGER PRIMARY KEY,
        unit_id  INTEGER NOT NULL REFERENCES search_units (id),
        seq      INTEGER NOT NULL,
        entry_id INTEGER NOT NULL,
        start    INTEGER NOT NULL,
        length   INTEGER NOT NULL,
        digest   BLOB NOT NULL,
        UNIQUE (unit_id, seq)
    ) STRICT
    """,
    "CREATE INDEX search_chunks_by_digest ON search_chunks (digest)",
    """
    CREATE TABLE search_generations (
        id               INTEGER PRIMARY KEY,
        fingerprint      TEXT NOT NULL UNIQUE,
        embedder         TEXT NOT NULL,
        model            TEXT NOT NULL,
        dims             INTEGER NOT NULL,
        embedded_through INTEGER NOT NULL DEFAULT 0,
        created_at       TEXT NOT NULL,
        ready_at         TEXT
    ) STRICT
    """,
    """
    CREATE TABLE search_vectors (
        generation INTEGER NOT NULL REFERENCES search_generations (id),
        digest     BLOB NOT NULL,
        vector     BLOB NOT NULL,
        PRIMARY KEY (generation, digest)
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TABLE search_index_cursor (
        only     INTEGER PRIMARY KEY CHECK (only = 1),
        entry_id INTEGER NOT NULL
    ) STRICT
    """,
    "INSERT INTO search_index_cursor (only, entry_id) VALUES (1, 0)",
)

# How a running root takes deliveries (issue 21; alpd/services/conversation/inject.py): a run
# may say "don't interrupt" (`delivery/hold`: `held_at`; what arrives waits for the next
# round), and its hook's last `delivery/pending` (`asked_at`) tells whether the model worked
# after an injection was acknowledged — a run that ended otherwise, and not completed, gives
# its injections back to the queue.
V20_DELIVERY_RUNS: Final = (
    """
    CREATE TABLE delivery_runs (
        execution_id TEXT PRIMARY KEY REFERENCES executions (id),
        held_at      TEXT,
        asked_at     TEXT
    ) STRICT, WITHOUT ROWID
    """,
)

# Memory across threads (alpd/domain/memory, docs/memory.md). `memory_versions` is the
# record: immutable rows (triggers refuse UPDATE and DELETE), each version's digest chained to
# the one before. `memories` is one row per memory pointing at its newest version, what
# listing and selection read (a projection of the record, rewritten by each new version; text
# is read from the version row, which the chain verifies); `memory_fts` indexes the text of
# active memories (rowid = memories.seq). `memory_proposals` holds what runs proposed until
# the person confirms or dismisses it (the inbox's second kind of item); `root_memories`, what
# each new root was given (immutable).
V21_MEMORY: Final = (
    """
    CREATE TABLE memory_versions (
        memory_id       TEXT NOT NULL,
        version         INTEGER NOT NULL CHECK (version >= 1),
        owner_uid       INTEGER NOT NULL,
        kind            TEXT NOT NULL,
        scope           TEXT NOT NULL CHECK (scope IN ('workspace', 'global')),
        workspace       TEXT,
        text            TEXT NOT NULL,
        status          TEXT NOT NULL CHECK (status IN ('active', 'retracted')),
        provenance      TEXT NOT NULL,
        confirmed_at    TEXT NOT NULL,
        at              TEXT NOT NULL,
        change          TEXT NOT NULL,
        previous_digest TEXT,
        digest          TEXT NOT NULL,
        PRIMARY KEY (memory_id, version)
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TRIGGER memory_versions_no_update BEFORE UPDATE ON memory_versions
    BEGIN SELECT RAISE(ABORT, 'memory versions are immutable: write a new version'); END
    """,
    """
    CREATE TRIGGER memory_versions_no_delete BEFORE DELETE ON memory_versions
    BEGIN SELECT RAISE(ABORT, 'memory versions are immutable: retract instead'); END
    """,
    """
    CREATE TABLE memories (
        seq          INTEGER PRIMARY KEY,
        id           TEXT NOT NULL UNIQUE,
        owner_uid    INTEGER NOT NULL,
        scope        TEXT NOT NULL,
        workspace    TEXT,
        kind         TEXT NOT NULL,
        status       TEXT NOT NULL,
        version      INTEGER NOT NULL,
        digest       TEXT NOT NULL,
        confirmed_at TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        thread_id    TEXT,
        file_path    TEXT,
        file_sha256  TEXT
    ) STRICT
    """,
    "CREATE INDEX memories_in_scope ON memories (owner_uid, status, workspace, confirmed_at)",
    "CREATE VIRTUAL TABLE memory_fts USING fts5 (text, tokenize = 'unicode61 remove_diacritics 2')",
    """
    CREATE TABLE memory_proposals (
        id           TEXT PRIMARY KEY,
        owner_uid    INTEGER NOT NULL,
        thread_id    TEXT NOT NULL REFERENCES threads (id),
        execution_id TEXT NOT NULL REFERENCES executions (id),
        workspace    TEXT NOT NULL,
        scope        TEXT NOT NULL,
        kind         TEXT NOT NULL,
        text         TEXT NOT NULL,
        file_path    TEXT,
        status       TEXT NOT NULL CHECK (status IN ('inbox', 'confirmed', 'dismissed')),
        proposed_at  TEXT NOT NULL,
        decided_at   TEXT,
        memory_id    TEXT
    ) STRICT
    """,
    "CREATE INDEX memory_proposals_waiting ON memory_proposals (owner_uid, status, proposed_at)",
    """
    CREATE TABLE root_memories (
        execution_id TEXT PRIMARY KEY REFERENCES executions (id),
        versions     TEXT NOT NULL,
        digest       TEXT NOT NULL,
        bytes        INTEGER NOT NULL
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TRIGGER root_memories_no_update BEFORE UPDATE ON root_memories
    BEGIN SELECT RAISE(ABORT, 'what a root was given is immutable'); END
    """,
    """
    CREATE TRIGGER root_memories_no_delete BEFORE DELETE ON root_memories
    BEGIN SELECT RAISE(ABORT, 'what a root was given is immutable'); END
    """,
)

# The chat doors (issue 23; alpd/channels/): where each bot's long poll stands (so a restart
# handles no update twice), who may speak through a channel (bound to this alpd's owner,
# changed only from a local door), which thread each chat talks to, and the one-time nonces
# of the Approve / Deny buttons sent to a chat.
V22_CHANNELS: Final = (
    """
    CREATE TABLE channel_cursors (
        channel     TEXT NOT NULL,
        account     TEXT NOT NULL,
        next_offset INTEGER NOT NULL,
        PRIMARY KEY (channel, account)
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TABLE channel_senders (
        channel   TEXT NOT NULL,
        sender    TEXT NOT NULL,
        owner_uid INTEGER NOT NULL,
        chat      TEXT NOT NULL,
        name      TEXT,
        paired_at TEXT NOT NULL,
        PRIMARY KEY (channel, sender)
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TABLE channel_chats (
        channel    TEXT NOT NULL,
        chat       TEXT NOT NULL,
        thread_id  TEXT REFERENCES threads (id),
        updated_at TEXT NOT NULL,
        PRIMARY KEY (channel, chat)
    ) STRICT, WITHOUT ROWID
    """,
    """
    CREATE TABLE channel_prompts (
        nonce       TEXT PRIMARY KEY,
        channel     TEXT NOT NULL,
        chat        TEXT NOT NULL,
        message     TEXT,
        subject     TEXT NOT NULL CHECK (subject IN ('inbox', 'permission')),
        subject_id  TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        answered_at TEXT,
        answer      TEXT CHECK (answer IN ('approve', 'deny', 'expired'))
    ) STRICT
    """,
    "CREATE INDEX channel_prompts_by_subject ON channel_prompts (subject, subject_id)",
)

# Outcomes gain `timed-out` and `budget-exceeded` (a run's guard rails, policy version 4).
# SQLite cannot alter a CHECK; widening an IN list changes no stored byte, so the table's
# text in sqlite_schema is edited in place (sqlite.org/lang_altertable.html, "other kinds of
# table schema changes"), in the migration's transaction; the runner then bumps
# schema_version so every connection reads the new text.
V23_LIMIT_OUTCOMES: Final = (
    "PRAGMA writable_schema = ON",
    """
    UPDATE sqlite_schema SET sql = replace(sql,
        '''cancelled'', ''interrupted'')',
        '''cancelled'', ''interrupted'', ''timed-out'', ''budget-exceeded'')')
    WHERE type = 'table' AND name = 'executions'
    """,
    "PRAGMA writable_schema = OFF",
)

# A schedule's own run limits (`alp schedule add --timeout --budget-usd`), put into the
# policy of each root it fires; NULL: the agent's.
V24_SCHEDULE_LIMITS: Final = (
    "ALTER TABLE schedules ADD COLUMN timeout_seconds INTEGER",
    "ALTER TABLE schedules ADD COLUMN budget_usd REAL",
)

# Workspaces across hosts (issue 24, point 6; docs/many-machines.md): a thread's workspace is
# also recorded as its repository's identity — the git remote's URL normalised
# (`alpd.domain.threads.repository.normalise_remote`) and the workspace's path within the
# checkout ('' at its top) — so another host continues in its own checkout of the same
# repository. NULL for a workspace that is not a git checkout with a remote.
V25_WORKSPACE_IDENTITY: Final = (
    "ALTER TABLE threads ADD COLUMN workspace_remote TEXT",
    "ALTER TABLE threads ADD COLUMN workspace_subpath TEXT",
)

# Budgets of a thread or a schedule (docs/budgets.md), and a schedule's reason and the run it
# wakes after (a one-off wake after a usage limit: one per run, `wake_of` unique).
V26_BUDGETS: Final = (
    """
    CREATE TABLE budgets (
        scope       TEXT NOT NULL CHECK (scope IN ('thread', 'schedule')),
        target_id   TEXT NOT NULL,
        owner_uid   INTEGER NOT NULL,
        usd         REAL,
        soft_usd    REAL,
        tokens      INTEGER,
        soft_tokens INTEGER,
        warned      TEXT CHECK (warned IN ('soft', 'hard')),
        updated_at  TEXT NOT NULL,
        PRIMARY KEY (scope, target_id)
    ) STRICT
    """,
    "ALTER TABLE schedules ADD COLUMN reason TEXT",
    "ALTER TABLE schedules ADD COLUMN wake_of TEXT",
    "CREATE UNIQUE INDEX schedules_wake_of ON schedules (wake_of) WHERE wake_of IS NOT NULL",
)

# Where reports go (issue 23, point 7; docs/channels.md): a schedule's destinations (a JSON
# array of `chats`, `telegram`, `wechat`, `thread:ID`, `none`; NULL: every paired chat), and
# the notice kinds each thread is muted for (`alp channel mute`).
V27_REPORT_DESTINATIONS: Final = (
    "ALTER TABLE schedules ADD COLUMN report_to TEXT",
    """
    CREATE TABLE channel_mutes (
        thread_id TEXT NOT NULL REFERENCES threads (id),
        kind      TEXT NOT NULL CHECK (kind IN ('reports', 'handoffs', 'failures', 'budget')),
        muted_at  TEXT NOT NULL,
        PRIMARY KEY (thread_id, kind)
    ) STRICT
    """,
)

# Hosts and leases (issue 24, point 3; docs/many-machines.md): each alpd registers its host
# (a stable id kept in its home, a name) and renews a lease; a root records the host that runs
# it, a schedule the host that fires it. A host whose lease expired is marked lost by the one
# host that takes it over (`lost_to`); `lost_at` stays set until the host, back, has said so.
V28_HOSTS: Final = (
    """
    CREATE TABLE hosts (
        id            TEXT PRIMARY KEY,
        name          TEXT NOT NULL,
        registered_at TEXT NOT NULL,
        renewed_at    TEXT NOT NULL,
        lease_until   TEXT NOT NULL,
        lost_at       TEXT,
        lost_to       TEXT,
        back_at       TEXT
    ) STRICT
    """,
    "ALTER TABLE executions ADD COLUMN host_id TEXT",
    "ALTER TABLE executions ADD COLUMN host_name TEXT",
    "ALTER TABLE executions ADD COLUMN settled_by TEXT",
    "ALTER TABLE schedules ADD COLUMN host_id TEXT",
    "CREATE INDEX executions_unsettled_host ON executions (host_id) WHERE status != 'settled'",
)

# What a channel has seen, kept across restarts (issue 23, point 3): a WeCom callback's nonce
# (a replay after a restart is refused) and a message id (a retried message is not handled
# twice). Each key may be forgotten after `until` (epoch seconds); bounded per channel.
V29_CHANNEL_SEEN: Final = (
    """
    CREATE TABLE channel_seen (
        channel TEXT NOT NULL,
        key     TEXT NOT NULL,
        until   REAL NOT NULL,
        PRIMARY KEY (channel, key)
    ) STRICT, WITHOUT ROWID
    """,
    "CREATE INDEX channel_seen_until ON channel_seen (channel, until)",
)

# PostgreSQL only (nothing on SQLite, whose FTS5 keeps its own index): the words of each
# searched document stored beside it, so that ranking a match reads them instead of folding
# and cutting its body again (the PostgreSQL bench found `history/search` p50 10x SQLite's,
# nearly all of it `alp_words(body)` recomputed for `ts_rank`: docs/benchmarks.md).
V30_SEARCH_VECTORS: Final[tuple[str, ...]] = ()

# A budget as a share of the runtime's subscription window (issue 27, point 4;
# docs/budgets.md), and the latest window each runtime reported for its owner (Codex's
# `rate_limits`, read from its rollout by the history sync).
V31_RATE_WINDOWS: Final = (
    "ALTER TABLE budgets ADD COLUMN window_percent REAL",
    "ALTER TABLE budgets ADD COLUMN soft_window_percent REAL",
    """
    CREATE TABLE rate_windows (
        owner_uid      INTEGER NOT NULL,
        runtime        TEXT NOT NULL,
        name           TEXT NOT NULL CHECK (name IN ('primary', 'secondary')),
        used_percent   REAL NOT NULL,
        window_minutes INTEGER,
        resets_at      INTEGER,
        execution_id   TEXT NOT NULL,
        observed_at    TEXT NOT NULL,
        PRIMARY KEY (owner_uid, runtime, name)
    ) STRICT
    """,
)

# A schedule's fire claimed by a row with a unique key (issue 24, point 2; docs/schedules.md):
# of two hosts passing over the same due schedule, the one whose insert of (schedule, fire
# time) lands fires it; the other's insert finds the key taken and fires nothing. A plain
# unique key in the fire's transaction: no session-level lock (which breaks behind a
# transaction-mode pooler). Rows older than what the schedule has accounted for are dropped as
# the next fire is claimed (a few rows per schedule), and with their schedule.
V32_SCHEDULE_FIRES: Final = (
    """
    CREATE TABLE schedule_fires (
        schedule_id TEXT NOT NULL,
        fire_time   TEXT NOT NULL,
        host_id     TEXT,
        claimed_at  TEXT NOT NULL,
        PRIMARY KEY (schedule_id, fire_time)
    ) STRICT, WITHOUT ROWID
    """,
)

# One person, not one uid (issue 24, point 5; docs/many-machines.md, "One person across
# hosts"): the number a person's rows are owned by (`owner_uid`), kept once per person, so a
# host where they have another uid maps it to the same number. On PostgreSQL every table is
# then bound to the database role that writes it (row-level security,
# `alpd.store.postgres.persons`).
V33_PERSONS: Final = (
    """
    CREATE TABLE persons (
        name          TEXT PRIMARY KEY,
        uid           INTEGER NOT NULL UNIQUE,
        registered_at TEXT NOT NULL
    ) STRICT
    """,
)

# PostgreSQL only (SQLite's database is one person's): the chat doors' keys made each person's
# (issue 24, point 5; docs/many-machines.md, "One person across hosts"). Two persons on one
# database may pair the same chat sender, talk from the same chat, or see the same message id
# or nonce; keyed by the channel alone, the second person's write met the first's row, which
# row-level security hides from them (a pairing refused, a message taken as seen).
V34_PERSON_KEYS: Final[tuple[str, ...]] = ()
# Events across hosts replayed after a lost LISTEN connection (issue 24; docs/many-machines.md,
# "Events across hosts"): each reference a host NOTIFYs is also kept here under a number that
# grows in the order the notifying transactions commit, so a host that listens again reads
# what it missed since the last number it heard. Only PostgreSQL fills it (on SQLite nothing
# crosses hosts: the table stays empty); the newest few thousand rows are kept.
V35_EVENT_LOG: Final = (
    """
    CREATE TABLE event_log (
        seq     INTEGER PRIMARY KEY,
        payload TEXT NOT NULL
    ) STRICT
    """,
)

# PostgreSQL only: keyword search through its GIN index as a person (issue 24; docs/many-
# machines.md, "Keyword search as a person"). Under row-level security PostgreSQL applies the
# policy before any condition that is not LEAKPROOF, and `@@` is not, so a person's
# `words @@ query` read every row of theirs; `alp_words_matching` runs the match as the schema's
# admin (SECURITY DEFINER) with the person's filter written into it.
V36_WORDS_MATCHING: Final[tuple[str, ...]] = ()

# PostgreSQL only: CJK search through its trigram index as a person, as 36 does for words:
# `LIKE` (`~~*` once translated) is not LEAKPROOF either, so a person's substring match read
# every CJK document of theirs; `alp_cjk_matching` matches one pattern as the schema's admin.
V37_CJK_MATCHING: Final[tuple[str, ...]] = ()

MIGRATIONS: Final[tuple[tuple[str, ...], ...]] = (
    V1_THREADS,
    V2_EXECUTIONS,
    V3_HISTORY,
    V4_FTS_MERGE,
    V5_COMPACTIONS,
    V6_ENTRY_DIGESTS,
    V7_DELIVERIES,
    V8_REPORTS,
    V9_SCHEDULES,
    V10_HANDOFFS,
    V11_DELIVERY_PATHS,
    V12_CONTEXT_STEPS,
    V13_RECAPS,
    V14_RECAP_FAILURES,
    V15_CURSOR_PREFIX,
    V16_EXECUTIONS_NO_DELETE,
    V17_PUSH_CHAINS,
    V18_APPLICATION_ID,
    V19_MEANING_INDEX,
    V20_DELIVERY_RUNS,
    V21_MEMORY,
    V22_CHANNELS,
    V23_LIMIT_OUTCOMES,
    V24_SCHEDULE_LIMITS,
    V25_WORKSPACE_IDENTITY,
    V26_BUDGETS,
    V27_REPORT_DESTINATIONS,
    V28_HOSTS,
    V29_CHANNEL_SEEN,
    V30_SEARCH_VECTORS,
    V31_RATE_WINDOWS,
    V32_SCHEDULE_FIRES,
    V33_PERSONS,
    V34_PERSON_KEYS,
    V35_EVENT_LOG,
    V36_WORDS_MATCHING,
    V37_CJK_MATCHING,
)

LATEST_VERSION: Final = len(MIGRATIONS)

#: PostgreSQL databases start at this version's schema (`alpd.store.postgres.schema.BASELINE`,
#: the tables above as PostgreSQL spells them): no PostgreSQL database of an older alp exists.
POSTGRES_BASELINE: Final = 25


def _admin_match(
    table: str, name: str, argument: tuple[str, str], returns: str, body: str
) -> tuple[str, ...]:
    """A search function of the schema's admin over `table` (36, 37), `name(argument)`:
    `table` bound to its persons first (its `owner_role`, which `body` filters on), then
    `body` with definer's rights where the migrating admin bypasses row-level security (a
    superuser, or BYPASSRLS), so the index answers a match the policies would keep from it
    and the person's filter is the body's own (`session_user`: the role the host connected
    as); an admin bound by the policies makes the invoker's function (correct, no index).
    Every person may call it."""
    parameter, kind = argument
    return (
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS owner_role TEXT NOT NULL "
        "DEFAULT current_user",
        f"""
        DO $migration$
        DECLARE
            rights TEXT := CASE WHEN (SELECT rolsuper OR rolbypassrls FROM pg_roles
                                      WHERE rolname = current_user)
                           THEN 'SECURITY DEFINER' ELSE 'SECURITY INVOKER' END;
        BEGIN
            EXECUTE format($create$
                CREATE FUNCTION {name}({parameter} {kind})
                RETURNS TABLE ({returns})
                LANGUAGE sql STABLE %s SET search_path FROM CURRENT
                AS $body$ {body} $body$
            $create$, rights);
        END
        $migration$
        """,
        f"REVOKE ALL ON FUNCTION {name}({kind}) FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION {name}({kind}) TO PUBLIC",
    )


#: a migration after `POSTGRES_BASELINE` whose statements PostgreSQL cannot run as they are
#: translated (`alpd.store.postgres.dialect.ddl`: tables, columns and indexes translate; a
#: trigger, a virtual table, a PRAGMA or an INTEGER PRIMARY KEY does not), as PostgreSQL runs
#: it, under the same number; a unit test fails a migration that needs an entry and has none,
#: so both backends migrate from one list
POSTGRES_MIGRATIONS: Final[dict[int, tuple[str, ...]]] = {
    30: (
        "ALTER TABLE search_words ADD COLUMN words tsvector "
        "GENERATED ALWAYS AS (alp_words(body)) STORED",
        "CREATE INDEX search_words_vectors ON search_words USING gin (words)",
        "DROP INDEX search_words_words",
    ),
    # persons; and the keys that were the database's alone made each person's, since a
    # person's role sees only their own rows (`alpd.store.postgres.persons`): a thread
    # document's id from a sequence (the lowest visible id is not the lowest), the meaning
    # index's generation per embedder per person, its cursor one row per person
    33: (
        """
        CREATE TABLE persons (
            name          TEXT PRIMARY KEY,
            uid           BIGINT NOT NULL UNIQUE,
            registered_at TEXT NOT NULL
        )
        """,
        "CREATE SEQUENCE thread_doc_ids INCREMENT BY -1 MAXVALUE -1 START WITH -1",
        "SELECT setval('thread_doc_ids', least(-1, (SELECT min(id) - 1 FROM thread_docs)), false)",
        *(
            f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS owner_role TEXT NOT NULL "
            "DEFAULT current_user"
            for table in ("search_generations", "search_index_cursor")
        ),
        "ALTER TABLE search_generations DROP CONSTRAINT search_generations_fingerprint_key",
        "ALTER TABLE search_generations ADD UNIQUE (fingerprint, owner_role)",
        "ALTER TABLE search_index_cursor DROP CONSTRAINT search_index_cursor_pkey",
        'ALTER TABLE search_index_cursor ADD PRIMARY KEY ("only", owner_role)',
    ),
    # each chat table's key with the person last (`alpd.store.postgres.dialect.PERSON_KEYED`
    # adds it to the statements' conflict targets); the column first, as 33 did, since the
    # binding of a database migrated from before persons comes at the end of the run
    34: tuple(
        statement
        for table, key in (
            ("channel_cursors", "channel, account"),
            ("channel_senders", "channel, sender"),
            ("channel_chats", "channel, chat"),
            ("channel_seen", "channel, key"),
        )
        for statement in (
            f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS owner_role TEXT NOT NULL "
            "DEFAULT current_user",
            f"ALTER TABLE {table} DROP CONSTRAINT {table}_pkey",
            f"ALTER TABLE {table} ADD PRIMARY KEY ({key}, owner_role)",
        )
    ),
    # the number from a sequence shared by every person's rows (each reads only their own:
    # gaps are expected), handed out under the notifiers' lock (`alpd.store.postgres.notify`)
    35: (
        """
        CREATE TABLE event_log (
            seq     BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            payload TEXT NOT NULL
        )
        """,
    ),
    # the admin's match of a person's words, through the GIN index that answers `@@`
    36: _admin_match(
        "search_words",
        "alp_words_matching",
        ("q", "tsquery"),
        "rowid BIGINT, words tsvector",
        "SELECT w.rowid, w.words FROM search_words w "
        "WHERE w.words @@ q AND w.owner_role = session_user",
    ),
    # the admin's substring match of a person's CJK documents: one pattern (the query's
    # longest term, `alpd.store.history.search_postgres`) through the pg_trgm index; the
    # other terms are filtered on what it returns, which is the person's alone
    37: _admin_match(
        "search_cjk",
        "alp_cjk_matching",
        ("pattern", "TEXT"),
        "rowid BIGINT, body TEXT",
        "SELECT c.rowid, c.body FROM search_cjk c "
        "WHERE c.body ILIKE pattern ESCAPE '\\' AND c.owner_role = session_user",
    ),
}
