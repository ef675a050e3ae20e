"""alpd: the alp daemon. Owns Threads, their executions, context snapshots and history."""

__version__ = "0.1.0"
