"""The secret filter: rules, context rules, and redact().

Pure: no IO, no clock; imports nothing of alpd.
"""
