"""Threads as data: context snapshots, checkpoints, the projector, session-context rendering, clear
and undo, the titles close to a mistyped one.

Pure: no IO, no clock; may import alpd.domain.canonical, ids, runs and secrets only.
"""
