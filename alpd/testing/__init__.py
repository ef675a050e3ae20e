"""alpd/testing."""
