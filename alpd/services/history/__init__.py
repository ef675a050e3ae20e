"""History: copying runtimes' transcripts into the store (sync, import, the reader process),
labels, full-text search.

May import alpd.domain, alpd.store, services.context and services.runs (the runs whose
transcripts it copies); the reader process (read_worker) loads nothing of alpd.store but
entry_rows.
"""
