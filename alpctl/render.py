"""Human-readable output of the CLI. Pure functions: result dicts in, text out.

Times arrive as UTC ISO 8601 and are shown in local time with the zone (`time` only: this
module is on every call's path, and `datetime` is not needed to shift a timestamp).
"""

from __future__ import annotations

from alpctl.clock import local_time

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Style:
    """ANSI emphasis when colour is wanted (a terminal, no NO_COLOR), else plain text."""

    def __init__(self, colour: bool = False) -> None:
        self.colour = colour

    def _sgr(self, code: str, text: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.colour and text else text

    def bold(self, text: str) -> str:
        return self._sgr("1", text)

    def dim(self, text: str) -> str:
        return self._sgr("2", text)

    def green(self, text: str) -> str:
        return self._sgr("32", text)

    def yellow(self, text: str) -> str:
        return self._sgr("33", text)

    def red(self, text: str) -> str:
        return self._sgr("31", text)


PLAIN = Style(colour=False)


def home_relative(path: str, home: str | None = None) -> str:
    import os.path  # already loaded by every Python start

    home = home if home is not None else os.path.expanduser("~")
    if home not in ("", "/") and (path == home or path.startswith(home + "/")):
        return "~" + path[len(home) :]
    return path


_LIST_COLUMNS = ("ID", "STATUS", "REV", "UPDATED", "WORKSPACE", "TITLE")


def _thread_row(thread: dict[str, Any], workspace: bool) -> list[str]:
    status = thread["status"] + (" busy" if thread.get("busyRoot") else "")
    row = [thread["id"], status, str(thread["revision"]), local_time(thread["updatedAt"])]
    if workspace:
        row.append(home_relative(thread["workspace"]))
    title = thread.get("title") or "(untitled)"
    headline = f" — {thread['headline']} (recap)" if thread.get("headline") else ""
    return [*row, title + headline]


def _paint_status(cell: str, style: Style) -> str:
    if cell.endswith(" busy"):
        return style.yellow(cell)
    return style.green(cell) if cell.startswith("open") else style.dim(cell)


def thread_list(
    result: dict[str, Any],
    params: dict[str, Any] | None = None,
    header: bool = False,
    style: Style = PLAIN,
) -> str:
    """Aligned columns (with a header on a terminal); the workspace column with `--all`."""
    params = params or {}
    threads = result["threads"]
    if not threads:
        return no_threads(params)
    everywhere = bool(params.get("all"))
    rows = [_thread_row(t, everywhere) for t in threads]
    names = [c for c in _LIST_COLUMNS if everywhere or c != "WORKSPACE"]
    table = [names, *rows] if header else rows
    widths = [max(len(row[i]) for row in table) for i in range(len(names) - 1)]
    lines = []
    for index, row in enumerate(table):
        cells = [cell.ljust(width) for cell, width in zip(row, widths, strict=False)]
        if header and index == 0:
            lines.append(style.bold("  ".join([*cells, row[-1]])))
            continue
        cells[1] = _paint_status(cells[1], style)
        lines.append("  ".join([*cells, row[-1]]))
    return "\n".join(lines)


def no_threads(params: dict[str, Any]) -> str:
    """Which filter matched nothing, and how to widen it."""
    statuses = params.get("statuses") or ([params["status"]] if params.get("status") else [])
    which = " or ".join(statuses) if statuses else ""
    if params.get("all"):
        where = "in any workspace"
    else:
        where = f"in {params.get('workspace') or params.get('cwd') or 'this workspace'}"
    what = f"no {which} threads {where}".replace("  ", " ")
    return f"{what}; `alp` starts one, `alp thread list --all` shows every workspace and status"


def thread_header(thread: dict[str, Any], style: Style = PLAIN) -> str:
    lines = [
        style.bold(thread.get("title") or "(untitled)"),
        f"  id         {thread['id']}",
        f"  status     {thread['status']}   revision {thread['revision']}   "
        f"context rev {thread['contextRevision']}",
        f"  workspace  {thread['workspace']}",
        f"  created    {local_time(thread['createdAt'])}   "
        f"updated {local_time(thread['updatedAt'])}",
    ]
    if thread.get("busyRoot"):
        lines.append(style.yellow(f"  running    {thread['busyRoot']}"))
    return "\n".join(lines)


def status(result: dict[str, Any]) -> str:
    counts = result["counts"]
    lines = [
        f"alpd {result['version']} (protocol {result['protocol']}), pid {result['pid']}, "
        f"up {result['uptimeSeconds']:.0f} s",
        f"  home      {result['home']}",
        f"  socket    {result['socket']}",
        f"  database  {result['database']}",
        f"  threads   {counts.get('threads', 0)} ({counts.get('openThreads', 0)} open), "
        f"executions {counts.get('executions', 0)} ({counts.get('running', 0)} running)",
        f"  clients   {result['connections']}",
    ]
    for task in result.get("tasks", []):
        lines.append(f"  task      {task['name']}: {task['state']}")
    meaning = meaning_state_line(result.get("search"))
    if meaning:
        lines.append(f"  {meaning}")
    return "\n".join(lines)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def execution_line(e: dict[str, Any]) -> str:
    outcome = e.get("outcome") or e["status"]
    seq = f"#{e['sequence']}" if e.get("sequence") is not None else "  "
    usage = e.get("usage")
    tokens = f"  {usage.get('inputTokens', 0)}→{usage.get('outputTokens', 0)} tok" if usage else ""
    cost = f"  ${e['costUsd']:.4f}" if e.get("costUsd") is not None else ""
    mode = "bg " if e.get("headless") else "tty"
    return (
        f"{seq:>4} {local_time(e.get('startedAt') or e['createdAt'])}  {e['runtime']:<8} "
        f"{mode} {e['kind']:<11} {outcome:<11} {duration(e.get('durationSeconds')):>7}  "
        f"rev {e.get('contextRevision', '-')}  {e['id']}{tokens}{cost}"
    )


_SECTIONS = (
    ("objective", "Objective"),
    ("decisions", "Decisions"),
    ("constraints", "Constraints"),
    ("openItems", "Open items"),
    ("nextActions", "Next actions"),
)


def context(result: dict[str, Any]) -> str:
    snapshot = result["snapshot"]
    lines = [f"context rev {result['revision']}  {result['digest'][:19]}…"]
    if snapshot.get("degraded"):
        lines.append("  (degraded: the last root's checkpoint was missing or broken)")
    number = 0
    for key, title in _SECTIONS:
        value = snapshot.get(key)
        items = [value] if isinstance(value, dict) else list(value or [])
        if not items:
            continue
        lines.append(f"  {title}")
        for item in items:
            # Open items show their id: `alp context pin resolve -- ID` closes one. The
            # number names the line for `alp memory promote THREAD N`.
            number += 1
            line_id = f"{item['id']}  " if key == "openItems" else ""
            lines.append(f"    {number}. {line_id}{item['text']}   [{item['sourceExecutionId']}]")
    resolved = snapshot.get("resolved") or []
    if resolved:
        lines.append("  Resolved (latest)")
        for item in resolved[-3:]:
            lines.append(f"    - {item['text']}   [{item['resolvedByExecutionId']}]")
    outcomes = snapshot.get("outcomes") or []
    if outcomes:
        lines.append("  Outcomes (latest)")
        for o in outcomes[-5:]:
            code = f" (exit {o['exitCode']})" if o.get("exitCode") not in (None, 0) else ""
            summary = f": {o['summary']}" if o.get("summary") else ""
            lines.append(f"    - {o['status']}{code}{summary}   [{o['sourceExecutionId']}]")
    if len(lines) == 1:
        lines.append("  (empty: pin with `alp context pin decision -- TEXT` from inside a run)")
    return "\n".join(lines)


def thread_show(result: dict[str, Any], style: Style = PLAIN) -> str:
    # Only `alp thread show` needs these: every other call imports this module without them.
    from alpctl.handoff_render import thread_handoffs
    from alpctl.timeline import timeline  # builds on this module's lines

    parts = [thread_header(result["thread"], style), "", style.bold("roots")]
    lines = timeline(result["roots"], result.get("steps", []))
    parts += lines or ["  (none yet: `alp thread continue ID`)"]
    if result.get("children"):
        parts.append(f"  + {result['children']} delegated child execution(s)")
    if result.get("temp"):
        parts.append(
            f"  + {result['temp']} temp run(s): the recap's refreshes (alp activity --kind temp)"
        )
    parts += ["", context(result["context"]), ""]
    history = result["history"]
    parts.append(f"history  {history['level']}, {history.get('entries', 0)} entries")
    parts += [root_history(root) for root in history.get("byRoot", [])]
    if result.get("reports"):
        parts += ["", style.bold("reports of background work")]
        parts += [report(r) for r in result["reports"]]
    parts += thread_handoffs(result)
    if result.get("recap"):
        from alpctl.recap_render import recap_block

        parts += ["", *recap_block(result["recap"])]
    return "\n".join(parts)


def report(r: dict[str, Any]) -> str:
    """One report: what ran, why, how it ended, its cost; then its message, indented."""
    origin = r.get("origin", {})
    why = origin.get("pushSource") or origin.get("scheduleId") or origin.get("purpose") or ""
    cost = f", ${r['costUsd']:.2f}" if r.get("costUsd") is not None else ""
    took = f", {r['durationSeconds']:.0f}s" if r.get("durationSeconds") is not None else ""
    head = f"  {r['at']}  {r['kind']}{f' ({why})' if why else ''}  {r['outcome']}{took}{cost}"
    lines = r.get("message", "").splitlines()[-5:]
    return "\n".join([head, *(f"    {line}" for line in lines), f"    ({r['executionId']})"])


def execution(e: dict[str, Any], style: Style = PLAIN) -> str:
    lines = [execution_line(e), style.dim(f"  policy {e['policyHash']}")]
    if e.get("hostId"):
        settled = e.get("settledBy")
        by = f", settled by host {settled}" if settled and settled != e["hostId"] else ""
        lines.append(f"  host {e.get('hostName') or '?'} ({e['hostId']}){by}")
    if e.get("outputTail") and e.get("outcome") not in (None, "completed"):
        lines += ["  output tail:", *("    " + line for line in e["outputTail"].splitlines()[-20:])]
    return "\n".join(lines)


def tree(node: dict[str, Any], depth: int = 0) -> str:
    e = node["execution"]
    label = (
        f"{'  ' * depth}{e['agent']} ({e['runtime']}, {e.get('outcome') or e['status']}) {e['id']}"
    )
    if depth == 0:
        label += f"  [{node['binding']}]"
    return "\n".join([label, *(tree(child, depth + 1) for child in node.get("children", []))])


# history (issue 5)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def search_hit(hit: dict[str, Any]) -> str:
    if hit["source"] == "thread":
        where = f"{hit.get('threadTitle') or '(untitled)'}  (title / context)"
        open_it = f"alp thread show {hit['threadId']}"
    elif hit.get("legacy"):
        session = (hit.get("nativeSessionId") or "")[:8]
        where = f"(legacy {hit.get('runtime')} session {session}, not in a thread)"
        open_it = f"alp execution show {hit['executionId']}"
    else:
        where = f"{hit.get('threadTitle') or '(untitled)'}  root #{hit.get('sequence', '?')}"
        open_it = f"alp thread show {hit['threadId']}"
    who = " ".join(x for x in (hit.get("runtime"), hit.get("role")) if x)
    if hit.get("entryId") is not None:
        who += f"  entry {hit['entryId']}"  # what `alp memory add --entry` cites
    labels = "".join(f"  [{label}]" for label in hit.get("labels", ()))
    return "\n".join(
        [
            f"{where}  {local_time(hit.get('at'))}  {who}".rstrip() + labels,
            f"    {_one_line(hit['snippet'])}",
            f"    → {open_it}",
        ]
    )


_SEARCH_FILTERS = (
    ("threadId", "--thread"),
    ("runtime", "--runtime"),
    ("role", "--role"),
    ("since", "--since"),
    ("until", "--until"),
)


def meaning_state_line(state: dict[str, Any] | None) -> str | None:
    """The meaning index's state in one line (`alp ps`, `alp status`)."""
    if not state:
        return None
    name = state["state"]
    if name == "off":
        return f"meaning index: off — {state.get('reason') or 'no embedder'}"
    line = f"meaning index: {name}"
    if name in ("building", "stale") or state.get("pendingEntries"):
        line += f" ({state.get('embedded', 0)} of {state.get('total', 0)} chunks"
        if state.get("rate"):
            line += f", {state['rate']:.0f}/s"
        line += ")"
    if name == "stale":
        line += ", the previous model answers meanwhile"
    if state.get("model"):
        line += f"  [{state.get('embedder')}: {state['model']}]"
    if state.get("error"):
        line += f"  last error: {state['error']}"
    return line


def search(result: dict[str, Any], params: dict[str, Any] | None = None) -> str:
    found = _search_history(result, params)
    memories = result.get("memories") or []
    if not memories:
        return found
    lines = ["memories (confirmed statements, not history)"]
    for memory in memories:
        scope = ", global" if memory["scope"] == "global" else ""
        lines.append(
            f"  {memory['id']}  {memory['kind']}{scope}  {local_time(memory['confirmedAt'])}"
        )
        lines.append(f"    {_one_line(memory['text'])}")
        lines.append(f"    → alp memory show {memory['id']}")
    return "\n".join(lines) + "\n\n" + found


def _search_history(result: dict[str, Any], params: dict[str, Any] | None) -> str:
    hits = result["hits"]
    notice = f"({result['notice']})" if result.get("notice") else None
    if not hits:
        params = params or {}
        filters = [f"{flag} {params[key]}" for key, flag in _SEARCH_FILTERS if params.get(key)]
        within = f" with {' '.join(filters)}" if filters else ""
        empty = (
            f"no matches for {params.get('query', '')!r}{within} "
            "(`alp import claude|codex` indexes sessions from before alp)"
        )
        return f"{empty}\n{notice}" if notice else empty
    shown = "\n\n".join(search_hit(hit) for hit in hits)
    return f"{shown}\n\n{notice}" if notice else shown


def root_history(root: dict[str, Any]) -> str:
    skipped = f", {root['skipped']} lines skipped" if root.get("skipped") else ""
    link = ""
    if root.get("linksTo"):
        link = f"  ({root.get('linkKind')} of {root['linksTo']})"
    return (
        f"  {root['executionId']}  {root['level']}, {root.get('entries', 0)} entries{skipped}{link}"
    )


def sync_result(result: dict[str, Any]) -> str:
    lines = [
        f"{result['threadId']}: history {result['level']}, {result['entries']} entries "
        f"({result['added']} added)"
    ]
    lines += [root_history(root) for root in result.get("roots", [])]
    return "\n".join(lines)


def import_result(result: dict[str, Any]) -> str:
    """A line per session (what was indexed and how complete), then the totals."""
    sessions = result.get("sessions") or []
    lines = []
    if sessions:
        rows = [["SESSION", "STATUS", "ENTRIES", "ADDED", "LEVEL", "FILE"]]
        rows += [
            [
                s["nativeSessionId"],
                s["status"],
                str(s["entries"]),
                str(s["added"]),
                (s.get("level") or "-") + (f" ({s['skipped']} skipped)" if s["skipped"] else ""),
                home_relative(s["path"]),
            ]
            for s in sessions
        ]
        widths = [max(len(row[i]) for row in rows) for i in range(5)]
        lines = [
            "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]])
            for row in rows
        ]
        lines.append("")
    known = f", {result['known']} already in threads" if result.get("known") else ""
    skipped = f", {result['skipped']} lines skipped" if result.get("skipped") else ""
    lines.append(
        f"imported {result['imported']} new {result['runtime']} sessions, "
        f"updated {result['updated']}{known} ({result['files']} files under {result['path']}): "
        f"{result['added']} entries added{skipped}"
    )
    lines.append("search them with `alp search WORDS`")
    return "\n".join(lines)
