"""alpd."""
