"""What every long list of the command line takes (issue 22, point 8): `-q` / `--quiet`, its
items' ids one a line for a script (`alp thread list -q | xargs -n1 alp thread show`), and
`--limit N`, how many the daemon sends.

`--json` wins over `-q`: a script asking for JSON gets the whole document. A list that
stopped at its limit says so on stderr (stdout stays the list), with the `--limit` that shows
more; `-q` says nothing there either way, as its reader is a program.
"""

from __future__ import annotations

import sys

from alpctl.invocation import UsageError

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable
    from typing import Any

    from alpctl.command_line import Arguments
    from alpctl.invocation import Output


def list_options(parser: argparse.ArgumentParser, *, default: int | None, most: int) -> None:
    """`-q` and, unless `default` is None (a list whose size the daemon does not bound),
    `--limit` of 1..`most`."""
    parser.add_argument(
        "-q", "--quiet", action="store_true", help="only the ids, one a line (for scripts)"
    )
    if default is not None:
        parser.add_argument(
            "--limit", type=int, default=default, help=f"at most this many (1..{most}; {default})"
        )


def checked_limit(args: Arguments, most: int) -> int:
    """`--limit`, or the usage error naming its range."""
    limit: int = args.limit
    if not 1 <= limit <= most:
        raise UsageError(f"--limit takes 1..{most} (got {limit})")
    return limit


def emit_list(
    out: Output,
    args: Arguments,
    result: Any,
    items: list[dict[str, Any]],
    text: Callable[[Any], str],
    *,
    key: str = "id",
    limit: int | None = None,
    most: int = 1000,
) -> None:
    """`result` as JSON, or its `items`' `key`s with `-q`, or `text(result)`; then, for a
    person, whether the list stopped at `limit`."""
    if out.as_json:
        out.json(result)
        return
    if args.quiet:
        if items:
            print("\n".join(str(item[key]) for item in items))
        return
    print(text(result))
    if limit is not None and len(items) >= limit:
        more = f"`--limit {min(limit * 2, most)}`" if limit < most else "a narrower filter"
        print(f"alp: {len(items)} shown, the limit; {more} shows more", file=sys.stderr)


__all__ = ["checked_limit", "emit_list", "list_options"]
