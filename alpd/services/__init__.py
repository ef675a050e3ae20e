"""alpd/services."""
