"""The secret filter: redact() (filter.py), the search it drives (scan.py), secrets found by
their name (named.py), vendor rules (rules.py) and context rules (context_rules.py).

Pure: no IO, no clock; imports nothing of alpd outside this package.
"""
