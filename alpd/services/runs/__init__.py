"""Runs: executions and their roots — reserve, spawn, attach, settle, wait, reconcile, the graph of
delegation and cancel, leases, who is calling.

May import alpd.domain, alpd.store, alpd.supervisor, alpd.runtimes, alpd.services.threads and
alpd.services.history.discovery.
"""
