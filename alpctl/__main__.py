"""Entry point of `alp` and `alpctl`."""

import sys

from alpctl.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
