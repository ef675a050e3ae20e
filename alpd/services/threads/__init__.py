"""Threads: create, list, show, close, archive; names, snapshots, pins, clear and undo.

May import alpd.domain, alpd.store, alpd.services.context and alpd.services.runs.leases; never a
door (rpc, web).
"""
