"""Runs as data: agent definitions, policies and their hashes, how an ended process settles.

Pure: no IO, no clock; may import alpd.domain.canonical, ids and spelling only.
"""
