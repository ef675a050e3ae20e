"""Conversation between a thread and the world: push, delivery (inject, queue, wake), inbox,
handoffs, reports, activity.

May import alpd.domain, alpd.store, alpd.services.threads and alpd.services.runs; never a door.
"""
