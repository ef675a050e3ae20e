"""alpd/rpc."""
