"""The store's SQLite statements as PostgreSQL runs them (alpd/store/postgres/dialect.py)."""

from __future__ import annotations

import pytest

from alpd.store.migrations import LATEST_VERSION, POSTGRES_BASELINE, POSTGRES_MIGRATIONS
from alpd.store.postgres.dialect import ddl, translate
from alpd.store.postgres.store import postgres_migration


def test_placeholders_become_psycopg_ones_and_a_literal_percent_stays_text() -> None:
    sql, numbered = translate("SELECT * FROM t WHERE a = ? AND note LIKE 'x%'")
    assert sql == "SELECT * FROM t WHERE a = %s AND note ILIKE 'x%%'"
    assert not numbered


def test_numbered_placeholders_are_named_so_one_value_serves_twice() -> None:
    sql, numbered = translate("SELECT ?1, ?2 WHERE x = ?1")
    assert sql == "SELECT %(p1)s, %(p2)s WHERE x = %(p1)s"
    assert numbered


def test_insert_or_ignore_is_on_conflict_do_nothing_before_returning() -> None:
    sql, _ = translate("INSERT OR IGNORE INTO t (a) VALUES (?) RETURNING a")
    assert sql == "INSERT INTO t (a) VALUES (%s) ON CONFLICT DO NOTHING RETURNING a"


def test_insert_or_replace_updates_every_column_but_the_key() -> None:
    sql, _ = translate("INSERT OR REPLACE INTO recaps (thread_id, headline, gist) VALUES (?, ?, ?)")
    assert sql == (
        "INSERT INTO recaps (thread_id, headline, gist) VALUES (%s, %s, %s) "
        "ON CONFLICT (thread_id) DO UPDATE SET headline = excluded.headline, gist = excluded.gist"
    )


def test_insert_or_replace_into_a_table_of_unknown_key_is_refused_not_guessed() -> None:
    with pytest.raises(ValueError, match="REPLACE_KEYS"):
        translate("INSERT OR REPLACE INTO mystery (a, b) VALUES (?, ?)")


def test_sqlite_functions_are_spelled_as_postgresql_has_them() -> None:
    sql, _ = translate(
        "SELECT max(a, excluded.a), min(b, ?), max(c), char(10), instr(t, ?), "
        "iif(x, 1, 0), json_extract(o, '$.k') FROM json_each(?)"
    )
    assert sql == (
        "SELECT GREATEST(a, excluded.a), LEAST(b, %s), max(c), chr(10), strpos(t, %s), "
        "alp_iif(x, 1, 0), alp_json_extract(o, '$.k') FROM alp_json_each(%s)"
    )


def test_a_person_keyed_tables_conflict_target_names_the_person_last() -> None:
    """Its key ends with `owner_role` (migration 34); other tables' targets are as written."""
    sql, _ = translate(
        "INSERT INTO channel_senders (channel, sender) VALUES (?, ?) "
        "ON CONFLICT (channel, sender) DO UPDATE SET sender = excluded.sender"
    )
    assert sql == (
        "INSERT INTO channel_senders (channel, sender) VALUES (%s, %s) "
        "ON CONFLICT (channel, sender, owner_role) DO UPDATE SET sender = excluded.sender"
    )
    sql, _ = translate("INSERT OR REPLACE INTO channel_cursors (channel, account, next_offset) "
                       "VALUES (?, ?, ?)")  # fmt: skip
    assert "ON CONFLICT (channel, account, owner_role) DO UPDATE SET next_offset" in sql
    sql, _ = translate(
        "INSERT INTO channel_seen (channel, key) VALUES (?, ?) ON CONFLICT DO NOTHING"
    )
    assert sql.endswith("ON CONFLICT DO NOTHING")
    sql, _ = translate(
        "INSERT INTO recaps (thread_id) VALUES (?) ON CONFLICT (thread_id) DO NOTHING"
    )
    assert sql.endswith("ON CONFLICT (thread_id) DO NOTHING")


def test_group_concat_is_string_agg_with_sqlites_comma() -> None:
    sql, _ = translate("SELECT group_concat(m.kind) AS kinds FROM m GROUP BY t")
    assert sql == "SELECT string_agg(m.kind, ',') AS kinds FROM m GROUP BY t"


def test_no_limit_before_an_offset_is_limit_all() -> None:
    sql, _ = translate("SELECT key FROM s ORDER BY until LIMIT -1 OFFSET ?")
    assert sql == "SELECT key FROM s ORDER BY until LIMIT ALL OFFSET %s"


def test_sqlite_null_safe_comparisons_are_is_distinct_from() -> None:
    sql, _ = translate("SELECT 1 WHERE a IS NOT b AND c IS d AND e IS NOT NULL AND f IS NULL")
    assert sql == (
        "SELECT 1 WHERE a IS DISTINCT FROM b AND c IS NOT DISTINCT FROM d "
        "AND e IS NOT NULL AND f IS NULL"
    )


def test_every_migration_after_the_postgresql_baseline_runs_on_postgresql() -> None:
    """Its own PostgreSQL statements, or SQLite's translated mechanically (`ddl` refuses
    what is not mechanical: then POSTGRES_MIGRATIONS needs the migration's entry)."""
    for number in range(POSTGRES_BASELINE + 1, LATEST_VERSION + 1):
        assert postgres_migration(number), number
    assert set(POSTGRES_MIGRATIONS) <= set(range(POSTGRES_BASELINE + 1, LATEST_VERSION + 1))


def test_table_ddl_translates_and_a_trigger_is_refused() -> None:
    assert ddl("CREATE TABLE t (a INTEGER, b REAL, c BLOB, PRIMARY KEY (a)) STRICT") == (
        "CREATE TABLE t (a BIGINT, b DOUBLE PRECISION, c BYTEA, PRIMARY KEY (a))"
    )
    assert ddl("ALTER TABLE t ADD COLUMN d INTEGER") == "ALTER TABLE t ADD COLUMN d BIGINT"
    with pytest.raises(ValueError, match="POSTGRES_MIGRATIONS"):
        ddl("CREATE TRIGGER t_no_update BEFORE UPDATE ON t BEGIN SELECT 1; END")
