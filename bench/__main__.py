"""`python -m bench [NAME…] [--strict]`: run every `bench/bench_*.py` and print one table.

NAME selects modules by the part after `bench_` (`python -m bench rpc`). With `--strict` the
exit status is 1 when a goal is missed; without it only a failing benchmark is an error
(figures on a shared machine are noisy, the table says which goals were met).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
import traceback
from pathlib import Path

from bench import Result, goal_met

HEADER = ("benchmark", "figure", "baseline (floor)", "ratio", "goal", "")


def discover() -> list[str]:
    package_dir = Path(__file__).parent
    return sorted(
        info.name[len("bench_") :]
        for info in pkgutil.iter_modules([str(package_dir)])
        if info.name.startswith("bench_")
    )


def number(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def row(result: Result) -> tuple[str, ...]:
    met = goal_met(result)
    return (
        result.name,
        f"{number(result.figure)} {result.unit}",
        f"{number(result.baseline)} {result.unit}" if result.baseline is not None else "-",
        f"{result.ratio:.2f}×" if result.ratio is not None else "-",
        result.goal or "-",
        {True: "ok", False: "MISSED", None: ""}[met],
    )


def print_table(rows: list[tuple[str, ...]]) -> None:
    widths = [max(len(r[i]) for r in [HEADER, *rows]) for i in range(len(HEADER))]
    for line in [HEADER, tuple("-" * w for w in widths), *rows]:
        print("  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"modules to run (default all: {discover()})")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    args = parser.parse_args(argv)
    available = discover()
    unknown = set(args.names) - set(available)
    if unknown:
        parser.error(f"no benchmark module {sorted(unknown)}; available: {available}")
    results: list[Result] = []
    failed: list[str] = []
    for name in args.names or available:
        started = time.monotonic()
        print(f"running bench_{name} …", file=sys.stderr, flush=True)
        try:
            module = importlib.import_module(f"bench.bench_{name}")
            results += module.run()
        except Exception:
            traceback.print_exc()
            failed.append(name)
        print(f"  {time.monotonic() - started:.1f} s", file=sys.stderr)
    print_table([row(result) for result in results])
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    if args.strict and any(goal_met(result) is False for result in results):
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
