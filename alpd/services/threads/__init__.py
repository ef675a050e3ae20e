"""Threads: create, list, show, close, archive; names, snapshots and checkpoints, pins, clear and
undo.

May import alpd.domain, alpd.store, services.context, services.runs (who is calling, an
execution's policy, the executions a clear or undo waits on) and services.history.summary; never
a door.
"""
