"""Schedules: create, list, show, pause, resume, delete; the scheduler task (alpd.background) fires
them; and the one-off wake of a thread whose root ended on its runtime's usage limit (`wakes`).

May import alpd.domain, alpd.store, services.context, services.threads, services.runs and
services.conversation (a fire wakes its thread), services.budgets (a schedule's budget);
never a door.
"""
