"""Budgets: a thread's or a schedule's limits over all its roots (USD or tokens), held by
the reconciler's pass (a soft limit warns every door once, a hard one ends the running root
`budget-exceeded`; the next root is refused in its reserving transaction, services.runs)
(docs/budgets.md; a usage limit's wake at the reset is services.schedules' `wakes`).

May import alpd.domain, alpd.store, alpd.desktop, services.context, services.threads and
services.runs; never a door.
"""
