"""alpd/store."""
