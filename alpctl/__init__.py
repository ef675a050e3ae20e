"""alpctl."""
