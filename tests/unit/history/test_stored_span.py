"""`stored_span`: what an import batch computes of a new execution's rows (how many are
stored, their first and last timestamps) is what the store holds once they are inserted —
what `SET_TIMES` and a count read back."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from alpd.services.history.import_batch import stored_span
from alpd.store.entry_rows import DIGESTED_COLUMNS, Value, entry_row
from alpd.store.history.entries import insert_entries, register_functions_on
from alpd.store.history.imports import SET_TIMES
from alpd.store.migrations import MIGRATIONS

_STAMPS = st.one_of(
    st.none(),
    st.sampled_from(["2026-11-01T05:00:00.000Z", "2026-11-01T05:00:00Z", "2026-12-24T23:59:59Z"]),
    st.text(max_size=3),
)


@settings(max_examples=80, deadline=None)
@given(entries=st.lists(st.tuples(st.sampled_from("12345"), _STAMPS), max_size=12))
def test_the_span_is_what_the_store_reads_back(entries: list[tuple[str, str | None]]) -> None:
    rows = []
    for offset, (native, ts) in enumerate(entries):
        params: dict[str, Value] = dict.fromkeys(DIGESTED_COLUMNS[:-1])
        params.update(
            execution_id="exec_new", native_id=native, role="user", kind="prompt",
            text=f"entry {offset}", ts=ts, byte_offset=offset, is_error=0,
        )  # fmt: skip
        rows.append(entry_row(params))
    conn = sqlite3.connect(":memory:", isolation_level=None)
    for migration in MIGRATIONS:
        for statement in migration:
            conn.execute(statement)
    register_functions_on(conn)
    conn.execute(
        "INSERT INTO executions (id, owner_uid, is_root, root_id, runtime, agent, kind, origin, "
        "headless, status, policy, policy_hash, cwd, exec_dir, created_at) VALUES ('exec_new', "
        "0, 1, 'exec_new', 'claude', 'claude', 'interactive', '{}', 0, 'settled', x'00', 'h', "
        "'', '', 'then')"
    )
    _, added = insert_entries(conn, rows)
    conn.execute(SET_TIMES, ("exec_new",))
    stored = conn.execute("SELECT started_at, settled_at FROM executions").fetchone()
    assert stored_span(rows) == (added, stored[0], stored[1])
