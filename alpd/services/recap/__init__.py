"""Recaps: when a thread's recap refreshes, the summarisers that write it, what a new root is given
besides its pins.

May import alpd.domain, alpd.store, services.context, services.threads, services.runs,
services.history and services.conversation (a summariser runs as a temp root); never a door.
"""
