"""Hosts and leases: the `[host]` table, a lease's arithmetic, and who may settle or
reconcile a root when several alpd share one database (docs/many-machines.md). Pure: no IO,
no clock (every function is given `now`)."""
