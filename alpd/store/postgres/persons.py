"""Every table bound to the person who writes it: row-level security per database role
(issue 24, point 5; docs/many-machines.md, "One person across hosts").

On PostgreSQL a person is the database role their alpd connects as (`current_user`). Each
table gets a column `owner_role` (default `current_user`, so no statement of the store names
it), row-level security **forced** (the tables' owner is bound as well) and one policy: a role
reads, changes and writes only rows whose `owner_role` is itself. So another person's rows are
unreachable with a shared database whatever the statement — alpd's, or a person's own `psql`.
Only a superuser or a role with BYPASSRLS sees everything (the tests' cluster role, an admin).

`bind_tables` runs at the end of every migration, in its transaction, on each table not bound
yet — a table a later migration makes is bound the first time it runs, without a PostgreSQL
statement of its own. The grants go to PUBLIC: who may connect to the database is the door
(`GRANT CONNECT`), the policies are the wall. `alp_schema` is the one table shared by all,
and read-only to them.

The column is never read back: the connection drops it from every row
(`alpd.store.postgres.connection`), so `SELECT *` reads what SQLite's tables have.
"""

from __future__ import annotations

from typing import Any, Final

import psycopg
from psycopg import sql

__all__ = ["OWNER_COLUMN", "POLICY", "SHARED_TABLES", "bind_tables", "unbound_tables"]

#: the column naming the role a row belongs to
OWNER_COLUMN: Final = "owner_role"
#: the name of the policy on every bound table
POLICY: Final = "alp_person"
#: tables every person reads (none of their rows is a person's)
SHARED_TABLES: Final = frozenset({"alp_schema"})

_TABLES: Final = """
SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')
  AND NOT (c.relrowsecurity AND c.relforcerowsecurity)
ORDER BY c.relname
"""


def unbound_tables(conn: psycopg.Connection[Any]) -> list[str]:
    """Tables of the schema without forced row-level security, but the shared ones."""
    return [row[0] for row in conn.execute(_TABLES) if row[0] not in SHARED_TABLES]


def bind_statements(table: str) -> tuple[str, ...]:
    """What binds `table`'s rows to the role that writes them."""
    return (
        f"ALTER TABLE {table} ADD COLUMN IF NOT EXISTS {OWNER_COLUMN} TEXT NOT NULL "
        "DEFAULT current_user",
        f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
        f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
        f"DROP POLICY IF EXISTS {POLICY} ON {table}",
        f"CREATE POLICY {POLICY} ON {table} USING ({OWNER_COLUMN} = current_user) "
        f"WITH CHECK ({OWNER_COLUMN} = current_user)",
    )


def bind_tables(conn: psycopg.Connection[Any]) -> list[str]:
    """Bind every unbound table and grant the tables to the persons; the tables bound.
    Existing rows of a newly bound table become the migrating role's."""
    tables = unbound_tables(conn)
    if not tables:
        return []
    for table in tables:
        for statement in bind_statements(table):
            conn.execute(statement)
    row = conn.execute("SELECT current_schema()").fetchone()
    schema = sql.Identifier(row[0] if row else "public")
    grants = (
        "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {} TO PUBLIC",
        "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA {} TO PUBLIC",
    )
    for grant in grants:
        conn.execute(sql.SQL(grant).format(schema))
    for shared in sorted(SHARED_TABLES):
        conn.execute(f"REVOKE INSERT, UPDATE, DELETE ON {shared} FROM PUBLIC")
    return tables
