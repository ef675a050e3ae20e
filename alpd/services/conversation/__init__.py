"""Conversation between a thread and the world: push, delivery (inject, queue, wake), inbox,
handoffs, reports, ps and activity.

May import alpd.domain, alpd.store, services.context, services.threads, services.runs,
services.history (a run's reply) and services.schedules (ps lists them); never a door.
"""
