"""`[store]`: where alpd keeps its state (docs/many-machines.md). Absent, SQLite in the home;
`url`, a PostgreSQL database shared by several hosts (`ALP_STORE_URL` overrides it where the
daemon starts: `alpd.store.db.store_url`)."""

from __future__ import annotations

from typing import Final

from alpd.domain.config_fields import Failer

__all__ = ["STORE_SCHEMES", "parse_store_url"]


#: the schemes of a PostgreSQL URL (libpq's)
STORE_SCHEMES: Final = ("postgresql://", "postgres://")


def parse_store_url(fail: Failer, table: object) -> str | None:
    """`[store] url`: absent, SQLite in the home; else a PostgreSQL URL."""
    if table is None:
        return None
    if not isinstance(table, dict):
        fail(("store",), "store must be a table")
    for key in table:
        if key != "url":
            fail(("store", key), f"unknown key {key!r} in [store] (known: url)")
    url = table.get("url")
    if url is None:
        return None
    if not isinstance(url, str) or not url.startswith(STORE_SCHEMES):
        fail(
            ("store", "url"),
            "store.url must be a PostgreSQL URL (postgresql://USER@HOST/DATABASE); leave it "
            "out for SQLite in the home",
        )
    return str(url)
