"""Hosts and leases: this alpd's host (its id kept in the home, its name), the lease it
renews, and the take-over of a host whose lease expired (its roots settled `interrupted`,
its schedules fired here) when several alpd share one database (docs/many-machines.md);
and the person this alpd's rows belong to, whatever their uid on this host (`person`).

May import alpd.domain, alpd.store, services.context and services.runs; never a door.
"""
