"""alpd/runtimes."""
