"""Conversation between a thread and the world: push, delivery (inject, queue, wake), inbox,
handoffs, reports, ps and activity.

May import alpd.domain, alpd.store, services.context, services.threads, services.runs,
services.history (a run's reply), services.schedules (ps lists them) and services.memory
(the inbox holds memory proposals); never a door.
"""
