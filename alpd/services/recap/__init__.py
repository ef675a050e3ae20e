"""Recaps: when a thread's recap refreshes, the summarisers that write it, what a new root is given
besides its pins.

May import alpd.domain, alpd.store, alpd.services.runs and alpd.services.threads.
"""
