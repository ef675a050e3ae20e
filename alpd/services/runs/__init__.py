"""Runs: executions and their roots: reserve, spawn, attach, settle, wait, reconcile, the graph of
delegation and cancel, leases, who is calling, logs.

May import alpd.domain, alpd.store, alpd.supervisor, alpd.runtimes, services.context,
services.threads (a root is a write to its thread), services.recap.root_context,
services.memory.root_context (the memories a new root is given) and services.history.discovery;
never a door.
"""
