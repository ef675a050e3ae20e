"""Bundles: a thread and everything that is its, written to one file that another alp
imports (`thread/export`, `thread/import`; docs/bundles.md), every digest checked on the way
in.

May import alpd.domain, alpd.store, services.context, services.threads and services.runs (a
run may not move threads); never a door.
"""
