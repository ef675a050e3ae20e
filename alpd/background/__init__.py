"""alpd/background."""
