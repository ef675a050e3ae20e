"""Checkpoints: the workspace's files before and after every root, in a shadow git repository
alp owns; what a root changed (`thread/diff`), putting the files back (`thread/restore`), and
keeping the repositories small (the gc task).

May import alpd.domain, alpd.store, services.context, services.threads and services.runs;
never a door.
"""
