"""The PostgreSQL schema: SQLite's (`alpd.store.migrations`) as PostgreSQL spells it.

PostgreSQL databases start at the schema of SQLite's version
`alpd.store.migrations.POSTGRES_BASELINE`, created in one
transaction by `BASELINE`: there is no PostgreSQL database of an older alp to migrate. Each
later migration is one entry of `alpd.store.migrations.MIGRATIONS` with both dialects
(`Migration`), so the two stay one list.

How SQLite's parts are spelled here:
- `INTEGER PRIMARY KEY` (SQLite's rowid) is an identity column; INTEGER is BIGINT, REAL is
  DOUBLE PRECISION, BLOB is BYTEA; STRICT and WITHOUT ROWID have no counterpart.
- A `RAISE(ABORT, …)` trigger (the immutable records) calls `alp_refuse(message)`, which
  raises with SQLSTATE 23000 (integrity_constraint_violation), as SQLite's constraint error.
- SQLite's functions the store's SQL calls and PostgreSQL lacks are SQL functions here
  (`alp_iif`, `alp_json_extract`, `alp_json_each`, `round(double precision, int)`); the dialect
  step (`alpd.store.postgres.dialect`) renames the calls.
- FTS5's tables (`search_words`, `search_cjk`, `memory_fts`) are plain tables of (rowid,
  body) that the store writes as it writes SQLite's, each with a GIN index: `alp_words(body)`
  (a tsvector of the folded words, cut as unicode61 cuts them) and `gin_trgm_ops` (pg_trgm)
  for the CJK-like documents. The thread documents' triggers keep them, as SQLite's do.
"""

# long: the whole schema of one version, table by table, as one constant; the triggers and
# functions beside the tables they guard.

from __future__ import annotations

from typing import Final

__all__ = ["BASELINE", "FUNCTIONS", "ROWS", "TABLES", "TRIGGERS"]

FUNCTIONS: Final = (
    # unaccent and pg_trgm are trusted extensions: the database's owner may create them
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    # SQLite's alp_fold (Python: NFKC, case-folded, accents off) as an immutable SQL function,
    # so that an index can be built over it (unaccent() itself is only stable)
    """
    CREATE FUNCTION alp_fold(value text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT lower(public.unaccent('public.unaccent'::regdictionary, coalesce(value, '')))
    $$
    """,
    """
    CREATE FUNCTION alp_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation';
    END $$
    """,
    # the words of a document as SQLite's unicode61 tokenizer cuts them: folded, then every run
    # of letters and digits one word (PostgreSQL's own parser would keep a path or a URL
    # whole, so `main` would not find `src/main.py`)
    """
    CREATE FUNCTION alp_words(value text) RETURNS tsvector
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT to_tsvector('simple', regexp_replace(alp_fold(value), '[^[:alnum:]]+', ' ', 'g'))
    $$
    """,
    # alpd.store.entry_rows.has_cjk: a character of a script written without spaces
    """
    CREATE FUNCTION alp_has_cjk(value text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(value, '') ~ ('[\\u0e00-\\u0eff\\u1000-\\u109f\\u1100-\\u11ff'
            '\\u1780-\\u17ff\\u3040-\\u30ff\\u3130-\\u318f\\u31f0-\\u31ff\\u3400-\\u4dbf'
            '\\u4e00-\\u9fff\\uac00-\\ud7af\\uf900-\\ufaff\\U00020000-\\U0002ffff]')
    $$
    """,
    # the thread documents' index, kept by their triggers as SQLite's are (V3)
    """
    CREATE FUNCTION alp_index_thread_doc() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'DELETE' THEN
            DELETE FROM search_words WHERE rowid = old.id;
            DELETE FROM search_cjk WHERE rowid = old.id;
            DELETE FROM cjk_docs WHERE id = old.id;
            RETURN old;
        END IF;
        INSERT INTO search_words (rowid, body)
            VALUES (new.id, coalesce(new.title, '') || chr(10) || coalesce(new.context, ''));
        IF alp_has_cjk(coalesce(new.title, '') || chr(10) || coalesce(new.context, '')) THEN
            INSERT INTO cjk_docs (id) VALUES (new.id);
            INSERT INTO search_cjk (rowid, body)
                VALUES (new.id, coalesce(new.title, '') || chr(10) || coalesce(new.context, ''));
        END IF;
        RETURN new;
    END $$
    """,
    # SQLite's iif, for the text columns the store chooses with it
    """
    CREATE FUNCTION alp_iif(condition boolean, yes text, no text) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$ SELECT CASE WHEN condition THEN yes ELSE no END $$
    """,
    # alpd.store.entry_rows.entry_digest of entry_content: sha256 of the compact JSON array
    # of the digested columns (a copy's digest, computed where it is inserted)
    """
    CREATE FUNCTION alp_entry_digest(
        e_execution_id text, e_native_id text, e_role text, e_kind text, e_text text,
        e_tool_name text, e_tool_input text, e_output_tail text, e_output_sha256 text,
        e_ts text, e_model text, e_usage text, e_call_id text, e_is_error bigint,
        e_byte_offset bigint, e_copy_of bigint
    )
    RETURNS text LANGUAGE sql IMMUTABLE AS $$
        SELECT 'sha256:' || encode(sha256(convert_to('[' || concat_ws(',',
                coalesce(to_json(e_execution_id)::text, 'null'),
                coalesce(to_json(e_native_id)::text, 'null'),
                coalesce(to_json(e_role)::text, 'null'),
                coalesce(to_json(e_kind)::text, 'null'),
                coalesce(to_json(e_text)::text, 'null'),
                coalesce(to_json(e_tool_name)::text, 'null'),
                coalesce(to_json(e_tool_input)::text, 'null'),
                coalesce(to_json(e_output_tail)::text, 'null'),
                coalesce(to_json(e_output_sha256)::text, 'null'),
                coalesce(to_json(e_ts)::text, 'null'),
                coalesce(to_json(e_model)::text, 'null'),
                coalesce(to_json(e_usage)::text, 'null'),
                coalesce(to_json(e_call_id)::text, 'null'),
                coalesce(to_json(e_is_error)::text, 'null'),
                coalesce(to_json(e_byte_offset)::text, 'null'),
                coalesce(to_json(e_copy_of)::text, 'null')
            ) || ']', 'UTF8')), 'hex')
    $$
    """,
    """
    CREATE FUNCTION alp_json_extract(doc text, path text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT AS $$
        SELECT jsonb_path_query_first(doc::jsonb, path::jsonpath) #>> '{}'
    $$
    """,
    """
    CREATE FUNCTION alp_json_each(doc text) RETURNS TABLE (key bigint, value text)
    LANGUAGE sql IMMUTABLE STRICT AS $$
        SELECT e.n - 1, e.v #>> '{}'
        FROM jsonb_array_elements(doc::jsonb) WITH ORDINALITY AS e (v, n)
    $$
    """,
    """
    CREATE FUNCTION round(value double precision, digits integer) RETURNS double precision
    LANGUAGE sql IMMUTABLE STRICT AS $$ SELECT round(value::numeric, digits)::double precision $$
    """,
)

TABLES: Final = (
    """
    CREATE TABLE threads (
        id               TEXT PRIMARY KEY,
        owner_uid        BIGINT NOT NULL,
        title            TEXT,
        workspace        TEXT NOT NULL,
        status           TEXT NOT NULL CHECK (status IN ('open', 'closed', 'archived')),
        revision         BIGINT NOT NULL CHECK (revision >= 1),
        context_revision BIGINT NOT NULL DEFAULT 0,
        created_at       TEXT NOT NULL,
        updated_at       TEXT NOT NULL,
        closed_at        TEXT,
        archived_at      TEXT,
        workspace_remote TEXT,
        workspace_subpath TEXT
    )
    """,
    "CREATE INDEX threads_by_workspace ON threads (owner_uid, workspace, updated_at)",
    "CREATE INDEX threads_by_owner ON threads (owner_uid, updated_at)",
    """
    CREATE TABLE thread_revisions (
        thread_id  TEXT NOT NULL REFERENCES threads (id),
        revision   BIGINT NOT NULL,
        change     TEXT NOT NULL,
        at         TEXT NOT NULL,
        detail     TEXT,
        PRIMARY KEY (thread_id, revision)
    )
    """,
    """
    CREATE TABLE executions (
        id                TEXT PRIMARY KEY,
        owner_uid         BIGINT NOT NULL,
        thread_id         TEXT REFERENCES threads (id),
        is_root           BIGINT NOT NULL CHECK (is_root IN (0, 1)),
        root_id           TEXT NOT NULL,
        parent_id         TEXT REFERENCES executions (id),
        sequence          BIGINT,
        runtime           TEXT NOT NULL,
        agent             TEXT NOT NULL,
        kind              TEXT NOT NULL,
        origin            TEXT NOT NULL,
        headless          BIGINT NOT NULL,
        status            TEXT NOT NULL CHECK (status IN ('reserved', 'running', 'settled')),
        outcome           TEXT
            CHECK (outcome IN ('completed', 'failed', 'cancelled', 'interrupted', 'timed-out',
                'budget-exceeded')),
        exit_code         BIGINT,
        summary           TEXT,
        policy            BYTEA NOT NULL,
        policy_hash       TEXT NOT NULL,
        context_revision  BIGINT,
        context_digest    TEXT,
        cwd               TEXT NOT NULL,
        exec_dir          TEXT NOT NULL,
        launcher_pid      BIGINT,
        pid               BIGINT,
        pid_start_time    DOUBLE PRECISION,
        boot_id           TEXT,
        native_session_id TEXT,
        transcript_path   TEXT,
        usage             TEXT,
        cost_usd          DOUBLE PRECISION,
        output_tail       TEXT,
        history_level     TEXT,
        history_skipped   BIGINT NOT NULL DEFAULT 0,
        created_at        TEXT NOT NULL,
        started_at        TEXT,
        settled_at        TEXT,
        UNIQUE (thread_id, sequence)
    )
    """,
    """
    CREATE UNIQUE INDEX one_unsettled_root ON executions (thread_id)
    WHERE is_root = 1 AND status != 'settled'
    """,
    "CREATE INDEX executions_by_root ON executions (root_id)",
    "CREATE INDEX executions_unsettled ON executions (status) WHERE status != 'settled'",
    """
    CREATE TABLE snapshots (
        thread_id       TEXT NOT NULL REFERENCES threads (id),
        revision        BIGINT NOT NULL,
        body            BYTEA NOT NULL,
        digest          TEXT NOT NULL,
        previous_digest TEXT,
        created_at      TEXT NOT NULL,
        PRIMARY KEY (thread_id, revision)
    )
    """,
    """
    CREATE TABLE checkpoints (
        execution_id TEXT PRIMARY KEY REFERENCES executions (id),
        body         BYTEA NOT NULL,
        digest       TEXT NOT NULL,
        updated_at   TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE history_entries (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
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
        is_error      BIGINT NOT NULL DEFAULT 0,
        byte_offset   BIGINT NOT NULL,
        copy_of       BIGINT, digest TEXT,
        UNIQUE (native_id, execution_id)
    )
    """,
    "CREATE INDEX history_by_execution ON history_entries (execution_id, id)",
    """
    CREATE TABLE history_cursors (
        execution_id  TEXT PRIMARY KEY REFERENCES executions (id),
        path          TEXT NOT NULL,
        format        TEXT NOT NULL CHECK (format IN ('claude', 'codex')),
        consumed      BIGINT NOT NULL,
        session_id    TEXT,
        model         TEXT,
        skipped       BIGINT NOT NULL DEFAULT 0,
        redactions    BIGINT NOT NULL DEFAULT 0,
        usage         TEXT,
        cost_usd      DOUBLE PRECISION,
        links_to      TEXT REFERENCES executions (id),
        link_kind     TEXT CHECK (link_kind IN ('resume', 'fork')),
        updated_at    TEXT NOT NULL
    , prefix_digest TEXT)
    """,
    "CREATE INDEX history_cursors_by_path ON history_cursors (path, consumed)",
    "CREATE INDEX executions_by_native_session ON executions (native_session_id, created_at)",
    """
    CREATE TABLE thread_docs (
        id         BIGINT PRIMARY KEY CHECK (id < 0),
        thread_id  TEXT NOT NULL UNIQUE REFERENCES threads (id),
        title      TEXT,
        context    TEXT,
        source     TEXT NOT NULL
    )
    """,
    """
    CREATE VIEW search_docs (id, body) AS
    SELECT id, coalesce(text, '') || chr(10) || coalesce(tool_name, '') || chr(10)
        || coalesce(tool_input, '') || chr(10) || coalesce(output_tail, '')
    FROM history_entries
    UNION ALL
    SELECT id, coalesce(title, '') || chr(10) || coalesce(context, '') FROM thread_docs
    """,
    "CREATE TABLE cjk_docs (id BIGINT PRIMARY KEY)",
    # FTS5's tables as plain ones: the store writes them as SQLite's (rowid, folded body);
    # search on PostgreSQL reads them through its own GIN index (alpd.store.history.search)
    "CREATE TABLE search_words (rowid BIGINT PRIMARY KEY, body TEXT NOT NULL)",
    "CREATE TABLE search_cjk (rowid BIGINT PRIMARY KEY, body TEXT NOT NULL)",
    "CREATE TABLE memory_fts (rowid BIGINT PRIMARY KEY, text TEXT NOT NULL)",
    "CREATE INDEX memory_fts_words ON memory_fts USING gin (to_tsvector('simple', alp_fold(text)))",
    "CREATE INDEX search_words_words ON search_words USING gin (alp_words(body))",
    "CREATE INDEX search_cjk_trigrams ON search_cjk USING gin (body gin_trgm_ops)",
    """
    CREATE TABLE compactions (
        thread_id  TEXT NOT NULL,
        revision   BIGINT NOT NULL,
        body       BYTEA NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (thread_id, revision),
        FOREIGN KEY (thread_id, revision) REFERENCES snapshots (thread_id, revision)
    )
    """,
    "CREATE TABLE history_digests (since BIGINT NOT NULL)",
    """
    CREATE TABLE deliveries (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        thread_id           TEXT NOT NULL REFERENCES threads (id),
        owner_uid           BIGINT NOT NULL,
        kind                TEXT NOT NULL,
        agent               TEXT NOT NULL,
        origin              TEXT NOT NULL,
        source_kind         TEXT NOT NULL,
        source              TEXT NOT NULL,
        envelope            TEXT NOT NULL,
        text                TEXT NOT NULL,
        notify              BIGINT NOT NULL DEFAULT 0,
        target_execution_id TEXT REFERENCES executions (id),
        coalesce_key        TEXT,
        status              TEXT NOT NULL
                            CHECK (status IN ('queued', 'delivered', 'injected', 'failed')),
        execution_id        TEXT REFERENCES executions (id),
        error               TEXT,
        created_at          TEXT NOT NULL,
        delivered_at        TEXT,
        route TEXT,
        how TEXT,
        lease_execution_id TEXT REFERENCES executions (id),
        lease_until TEXT,
        note TEXT,
        from_thread_id TEXT REFERENCES threads (id),
        chain_id TEXT,
        hop BIGINT,
        sent_at DOUBLE PRECISION
    )
    """,
    "CREATE INDEX deliveries_queued ON deliveries (thread_id, id) WHERE status = 'queued'",
    "CREATE INDEX deliveries_by_execution ON deliveries (execution_id)",
    """
    CREATE UNIQUE INDEX deliveries_coalesced ON deliveries (thread_id, coalesce_key)
    WHERE status = 'queued' AND coalesce_key IS NOT NULL
    """,
    """
    CREATE TABLE reports (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        thread_id           TEXT NOT NULL REFERENCES threads (id),
        owner_uid           BIGINT NOT NULL,
        execution_id        TEXT NOT NULL UNIQUE REFERENCES executions (id),
        kind                TEXT NOT NULL,
        agent               TEXT NOT NULL,
        runtime             TEXT NOT NULL,
        origin              TEXT NOT NULL,
        outcome             TEXT NOT NULL,
        message             TEXT NOT NULL,
        message_source      TEXT NOT NULL CHECK (message_source IN ('transcript', 'output')),
        redactions          BIGINT NOT NULL DEFAULT 0,
        cost_usd            DOUBLE PRECISION,
        duration_seconds    DOUBLE PRECISION,
        usage               TEXT,
        notify              BIGINT NOT NULL DEFAULT 0,
        parent_execution_id TEXT REFERENCES executions (id),
        created_at          TEXT NOT NULL
    )
    """,
    "CREATE INDEX reports_by_thread ON reports (thread_id, id)",
    "CREATE INDEX reports_by_owner ON reports (owner_uid, created_at)",
    """
    CREATE TABLE schedules (
        id              TEXT PRIMARY KEY,
        owner_uid       BIGINT NOT NULL,
        thread_id       TEXT NOT NULL REFERENCES threads (id),
        rule            TEXT NOT NULL CHECK (rule IN ('cron', 'every', 'at')),
        expression      TEXT NOT NULL,
        timezone        TEXT NOT NULL,
        anchor_at       TEXT NOT NULL,
        prompt          TEXT NOT NULL,
        agent           TEXT,
        runtime         TEXT,
        notify          BIGINT NOT NULL DEFAULT 0,
        catch_up        TEXT NOT NULL CHECK (catch_up IN ('one', 'none')),
        status          TEXT NOT NULL CHECK (status IN ('active', 'paused', 'stopped', 'done')),
        stop_reason     TEXT,
        accounted_until TEXT NOT NULL,
        next_fire_at    TEXT,
        firing_at       TEXT,
        firing_missed   BIGINT NOT NULL DEFAULT 0,
        last_fire_at    TEXT,
        runs            BIGINT NOT NULL DEFAULT 0,
        missed          BIGINT NOT NULL DEFAULT 0,
        created_at      TEXT NOT NULL,
        updated_at      TEXT NOT NULL
    , timeout_seconds BIGINT, budget_usd DOUBLE PRECISION)
    """,
    "CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE status = 'active'",
    "CREATE INDEX schedules_by_owner ON schedules (owner_uid, thread_id)",
    """
    CREATE INDEX executions_by_schedule ON executions ((alp_json_extract(origin, '$.scheduleId')))
    WHERE kind = 'scheduled'
    """,
    "CREATE INDEX executions_by_owner ON executions (owner_uid, created_at)",
    """
    CREATE TABLE handoffs (
        id                  TEXT PRIMARY KEY,
        owner_uid           BIGINT NOT NULL,
        source_thread_id    TEXT NOT NULL REFERENCES threads (id),
        source_execution_id TEXT REFERENCES executions (id),
        target_thread_id    TEXT NOT NULL REFERENCES threads (id),
        summary             TEXT NOT NULL,
        artifacts           TEXT NOT NULL,
        directive           BIGINT NOT NULL CHECK (directive IN (0, 1)),
        chain_id            TEXT NOT NULL,
        hop                 BIGINT NOT NULL CHECK (hop >= 1),
        slot                TEXT NOT NULL CHECK (slot IN ('reserved', 'committed', 'released')),
        reserved_at         DOUBLE PRECISION NOT NULL,
        holder              TEXT NOT NULL,
        status              TEXT NOT NULL CHECK (status IN
                                ('sending', 'sent', 'inbox', 'confirmed', 'dismissed', 'failed')),
        path                TEXT CHECK (path IN ('wake', 'queue', 'inbox')),
        delivery_id         BIGINT REFERENCES deliveries (id),
        error               TEXT,
        created_at          TEXT NOT NULL,
        decided_at          TEXT
    )
    """,
    "CREATE INDEX handoffs_by_pair ON handoffs (source_thread_id, target_thread_id, reserved_at)",
    "CREATE INDEX handoffs_by_target ON handoffs (target_thread_id, created_at)",
    "CREATE INDEX handoffs_by_chain ON handoffs (chain_id, reserved_at)",
    "CREATE INDEX handoffs_by_delivery ON handoffs (delivery_id) WHERE delivery_id IS NOT NULL",
    "CREATE INDEX handoffs_inbox ON handoffs (owner_uid, target_thread_id) WHERE status = 'inbox'",
    """
    CREATE TABLE context_steps (
        thread_id         TEXT NOT NULL REFERENCES threads (id),
        revision          BIGINT NOT NULL,
        kind              TEXT NOT NULL CHECK (kind IN ('clear', 'undo')),
        replaced_revision BIGINT NOT NULL CHECK (replaced_revision = revision - 1),
        restored_revision BIGINT,
        execution_id      TEXT REFERENCES executions (id),
        requested_by      TEXT NOT NULL,
        door              TEXT NOT NULL,
        at                TEXT NOT NULL,
        PRIMARY KEY (thread_id, revision),
        CHECK ((kind = 'undo') = (execution_id IS NOT NULL)),
        CHECK ((kind = 'undo') = (restored_revision IS NOT NULL))
    )
    """,
    "CREATE UNIQUE INDEX context_steps_one_undo_per_root ON context_steps (execution_id) "
    "WHERE kind = 'undo'",
    """
    CREATE TABLE recaps (
        thread_id       TEXT PRIMARY KEY REFERENCES threads (id),
        headline        TEXT NOT NULL,
        gist            TEXT NOT NULL,
        open_tasks      TEXT NOT NULL,
        source_revision BIGINT NOT NULL,
        recap_entry_id  BIGINT NOT NULL,
        roots           BIGINT NOT NULL,
        execution_id    TEXT NOT NULL REFERENCES executions (id),
        digest          TEXT NOT NULL,
        made_at         TEXT NOT NULL
    )
    """,
    """
    CREATE TABLE root_derived (
        execution_id    TEXT PRIMARY KEY REFERENCES executions (id),
        recap_revision  BIGINT,
        recap_made_at   TEXT,
        recap_digest    TEXT,
        tail_from       TEXT REFERENCES executions (id),
        digest          TEXT NOT NULL,
        chars           BIGINT NOT NULL
    )
    """,
    """
    CREATE TABLE recap_failures (
        thread_id TEXT PRIMARY KEY REFERENCES threads (id),
        failures  BIGINT NOT NULL CHECK (failures > 0),
        failed_at TEXT NOT NULL
    )
    """,
    """
    CREATE INDEX deliveries_pair ON deliveries (from_thread_id, thread_id, sent_at)
    WHERE from_thread_id IS NOT NULL
    """,
    "CREATE INDEX deliveries_chain ON deliveries (chain_id) WHERE chain_id IS NOT NULL",
    """
    CREATE TABLE search_units (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        execution_id TEXT NOT NULL REFERENCES executions (id),
        role         TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
        first_entry  BIGINT NOT NULL,
        last_entry   BIGINT NOT NULL,
        chars        BIGINT NOT NULL
    )
    """,
    "CREATE INDEX search_units_by_execution ON search_units (execution_id, first_entry)",
    """
    CREATE TABLE search_chunks (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        unit_id  BIGINT NOT NULL REFERENCES search_units (id),
        seq      BIGINT NOT NULL,
        entry_id BIGINT NOT NULL,
        start    BIGINT NOT NULL,
        length   BIGINT NOT NULL,
        digest   BYTEA NOT NULL,
        UNIQUE (unit_id, seq)
    )
    """,
    "CREATE INDEX search_chunks_by_digest ON search_chunks (digest)",
    """
    CREATE TABLE search_generations (
        id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        fingerprint      TEXT NOT NULL UNIQUE,
        embedder         TEXT NOT NULL,
        model            TEXT NOT NULL,
        dims             BIGINT NOT NULL,
        embedded_through BIGINT NOT NULL DEFAULT 0,
        created_at       TEXT NOT NULL,
        ready_at         TEXT
    )
    """,
    """
    CREATE TABLE search_vectors (
        generation BIGINT NOT NULL REFERENCES search_generations (id),
        digest     BYTEA NOT NULL,
        vector     BYTEA NOT NULL,
        PRIMARY KEY (generation, digest)
    )
    """,
    """
    CREATE TABLE search_index_cursor (
        "only"   BIGINT PRIMARY KEY CHECK ("only" = 1),
        entry_id BIGINT NOT NULL
    )
    """,
    """
    CREATE TABLE delivery_runs (
        execution_id TEXT PRIMARY KEY REFERENCES executions (id),
        held_at      TEXT,
        asked_at     TEXT
    )
    """,
    """
    CREATE TABLE memory_versions (
        memory_id       TEXT NOT NULL,
        version         BIGINT NOT NULL CHECK (version >= 1),
        owner_uid       BIGINT NOT NULL,
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
    )
    """,
    """
    CREATE TABLE memories (
        seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        id           TEXT NOT NULL UNIQUE,
        owner_uid    BIGINT NOT NULL,
        scope        TEXT NOT NULL,
        workspace    TEXT,
        kind         TEXT NOT NULL,
        status       TEXT NOT NULL,
        version      BIGINT NOT NULL,
        digest       TEXT NOT NULL,
        confirmed_at TEXT NOT NULL,
        created_at   TEXT NOT NULL,
        updated_at   TEXT NOT NULL,
        thread_id    TEXT,
        file_path    TEXT,
        file_sha256  TEXT
    )
    """,
    "CREATE INDEX memories_in_scope ON memories (owner_uid, status, workspace, confirmed_at)",
    """
    CREATE TABLE memory_proposals (
        id           TEXT PRIMARY KEY,
        owner_uid    BIGINT NOT NULL,
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
    )
    """,
    "CREATE INDEX memory_proposals_waiting ON memory_proposals (owner_uid, status, proposed_at)",
    """
    CREATE TABLE root_memories (
        execution_id TEXT PRIMARY KEY REFERENCES executions (id),
        versions     TEXT NOT NULL,
        digest       TEXT NOT NULL,
        bytes        BIGINT NOT NULL
    )
    """,
    """
    CREATE TABLE channel_cursors (
        channel     TEXT NOT NULL,
        account     TEXT NOT NULL,
        next_offset BIGINT NOT NULL,
        PRIMARY KEY (channel, account)
    )
    """,
    """
    CREATE TABLE channel_senders (
        channel   TEXT NOT NULL,
        sender    TEXT NOT NULL,
        owner_uid BIGINT NOT NULL,
        chat      TEXT NOT NULL,
        name      TEXT,
        paired_at TEXT NOT NULL,
        PRIMARY KEY (channel, sender)
    )
    """,
    """
    CREATE TABLE channel_chats (
        channel    TEXT NOT NULL,
        chat       TEXT NOT NULL,
        thread_id  TEXT REFERENCES threads (id),
        updated_at TEXT NOT NULL,
        PRIMARY KEY (channel, chat)
    )
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
    )
    """,
    "CREATE INDEX channel_prompts_by_subject ON channel_prompts (subject, subject_id)",
)


def _refusing(name: str, event: str, table: str, message: str, when: str = "") -> str:
    return (
        f"CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW {when}"
        f"EXECUTE FUNCTION alp_refuse('{message}')"
    )


#: the rows a migration wrote with its tables
ROWS: Final = (
    "INSERT INTO history_digests (since) VALUES (1)",
    'INSERT INTO search_index_cursor ("only", entry_id) VALUES (1, 0)',
)

TRIGGERS: Final = (
    _refusing(
        "executions_policy_immutable",
        "UPDATE OF policy, policy_hash, context_revision, context_digest, thread_id, root_id",
        "executions",
        "an execution policy and binding are immutable",
    ),
    _refusing(
        "executions_no_delete", "DELETE", "executions", "an execution and its policy are immutable"
    ),
    _refusing("snapshots_no_update", "UPDATE", "snapshots", "snapshots are immutable"),
    _refusing("snapshots_no_delete", "DELETE", "snapshots", "snapshots are immutable"),
    _refusing(
        "history_entries_immutable", "UPDATE", "history_entries", "history entries are immutable"
    ),
    _refusing(
        "thread_docs_no_update",
        "UPDATE",
        "thread_docs",
        "replace a thread document: delete, then insert",
    ),
    _refusing("compactions_no_update", "UPDATE", "compactions", "compaction records are immutable"),
    _refusing("compactions_no_delete", "DELETE", "compactions", "compaction records are immutable"),
    _refusing(
        "history_digests_immutable", "UPDATE", "history_digests", "history_digests is immutable"
    ),
    _refusing("context_steps_no_update", "UPDATE", "context_steps", "context steps are immutable"),
    _refusing("context_steps_no_delete", "DELETE", "context_steps", "context steps are immutable"),
    _refusing(
        "root_derived_immutable", "UPDATE", "root_derived", "what a root was given is immutable"
    ),
    _refusing(
        "memory_versions_no_update",
        "UPDATE",
        "memory_versions",
        "memory versions are immutable: write a new version",
    ),
    _refusing(
        "memory_versions_no_delete",
        "DELETE",
        "memory_versions",
        "memory versions are immutable: retract instead",
    ),
    _refusing(
        "root_memories_no_update", "UPDATE", "root_memories", "what a root was given is immutable"
    ),
    _refusing(
        "root_memories_no_delete", "DELETE", "root_memories", "what a root was given is immutable"
    ),
    "CREATE TRIGGER thread_docs_indexed AFTER INSERT OR DELETE ON thread_docs "
    "FOR EACH ROW EXECUTE FUNCTION alp_index_thread_doc()",
    _refusing(
        "history_entries_need_a_digest",
        "INSERT",
        "history_entries",
        "a history entry needs its digest",
        when="WHEN (new.digest IS NULL) ",
    ),
)

#: every statement of the baseline, in order
BASELINE: Final = FUNCTIONS + TABLES + ROWS + TRIGGERS
