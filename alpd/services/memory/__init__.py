"""Memory across threads: what the person writes, confirms, supersedes and retracts (`service`),
what a run proposes into the inbox (`proposals`), what a new root is given (`root_context`).

May import alpd.domain, alpd.store, services.context, services.threads (a thread named, its
context read for a promote or a citation) and services.runs (who is calling: a run proposes,
only the person writes); never a door.
"""
