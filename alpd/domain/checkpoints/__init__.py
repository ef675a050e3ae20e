"""File checkpoints as data: the `[checkpoints]` settings, ref names, what a restore changes,
what garbage collection drops.

Pure: no IO, no clock (times are parameters); imports nothing of alpd outside alpd.domain.
"""
