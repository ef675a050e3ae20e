"""The threads list's rows, rendered in Python rather than in the template.

The page lists up to 1,000 threads and its goal is a p50 under 30 ms for that many. A Jinja2
loop spends most of that in per-row overhead (one generator step per output piece, one
Markup object per escape): on the same machine and the same 1,000 rows the template took
~10× the time this function does. Every value a person or a file can choose
(title, workspace, headline) is escaped with `html.escape`, quotes included; ids, times and
the literal kinds and statuses are the daemon's own spelling and go in as they are. The
template inserts the result as one Markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from html import escape

from markupsafe import Markup

from alpd.web.view import ago
from protocol import messages as m


def thread_row(thread: m.Thread, now: datetime) -> str:
    busy = thread.busy_root is not None
    badges = []
    if busy:
        badges.append(f'<span class="badge running" title="{thread.busy_root}">running</span>')
    if thread.status != "open":
        badges.append(f'<span class="badge">{thread.status}</span>')
    if thread.last_kind:
        badges.append(f'<span class="badge kind">{thread.last_kind}</span>')
    recap = f'<p class="headline">{escape(thread.headline)}</p>' if thread.headline else ""
    return (
        f'<li class="thread{" busy" if busy else ""}">'
        f'<a class="title" href="/t/{thread.id}">{escape(thread.title or thread.id)}</a>'
        f"{''.join(badges)}{recap}"
        f'<span class="meta"><time datetime="{thread.updated_at}">'
        f"{ago(thread.updated_at, now)}</time> · {escape(thread.workspace)}</span></li>"
    )


def thread_rows(threads: Sequence[m.Thread], now: datetime) -> Markup:
    return Markup("\n".join(thread_row(thread, now) for thread in threads))
