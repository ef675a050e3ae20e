"""alpd/domain."""
