"""Schedules: create, list, show, pause, resume, delete; the scheduler task fires them.

May import alpd.domain, alpd.store, alpd.services.runs and alpd.services.conversation.
"""
