"""History: copying runtimes' transcripts into the store (sync, import, the reader process),
labels, full-text search.

May import alpd.domain, alpd.store, alpd.services.context; the reader process (read_worker)
imports nothing of alpd.store.
"""
