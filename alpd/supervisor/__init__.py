"""alpd/supervisor."""
