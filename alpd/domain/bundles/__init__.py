"""Portable thread bundles, as pure rules: the file's lines (a header, one record a line, a
manifest last) and how they are written and read back with their counts and digests
(`format`). No IO: the service streams bytes through it.

May import alpd.domain.canonical and alpd.errors; never IO, never the clock.
"""
