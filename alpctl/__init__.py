"""alpctl: the thin client of alpd (`alp` is its short name). Stdlib only on the CLI path."""

#: the package's version (pyproject.toml reads it from here)
__version__ = "0.1.0"
