"""alpctl: the thin client of alpd (`alp` is its short name). Stdlib only on the CLI path."""
