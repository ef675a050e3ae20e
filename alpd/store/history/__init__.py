"""The history's statements, by job (the schema is migration V3 onward, `alpd.store.migrations`;
the why is in docs/history.md):

* `entries` — inserting and indexing entries (the writer's SQL functions, the two FTS5
  indexes); what is computed per entry is `alpd.store.entry_rows`, off the writer;
* `sync` — an execution's copy cursor, one chunk's commit, completeness levels;
* `imports` — legacy executions of `history/import`, a batch of new sessions in one unit;
* `search` — `history/search` whole, in one hop to the reader's thread, and the digest check;
* `labels` — the entries a recap may read;
* `threads` — a thread's roots' copies and its search document;
* `sessions` — native sessions of runs that announce them late.
"""
