"""Human-readable output of the CLI. Pure functions: result dicts in, text out."""

from __future__ import annotations

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def short_time(iso: str | None) -> str:
    if not iso:
        return "-"
    return iso.replace("T", " ")[:16]


def thread_line(thread: dict[str, Any]) -> str:
    title = thread.get("title") or "(untitled)"
    status = thread["status"]
    busy = " busy" if thread.get("busyRoot") else ""
    return (
        f"{thread['id']}  {status:<8}{busy}  rev {thread['revision']:<4} "
        f"{short_time(thread['updatedAt'])}  {title}"
    )


def thread_list(result: dict[str, Any]) -> str:
    threads = result["threads"]
    if not threads:
        return "no threads here; `alp` starts one, `alp thread list --all` shows every workspace"
    return "\n".join(thread_line(t) for t in threads)


def thread_header(thread: dict[str, Any]) -> str:
    lines = [
        f"{thread.get('title') or '(untitled)'}",
        f"  id         {thread['id']}",
        f"  status     {thread['status']}   revision {thread['revision']}   "
        f"context rev {thread['contextRevision']}",
        f"  workspace  {thread['workspace']}",
        f"  created    {short_time(thread['createdAt'])}   "
        f"updated {short_time(thread['updatedAt'])}",
    ]
    if thread.get("busyRoot"):
        lines.append(f"  running    {thread['busyRoot']}")
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
        f"{seq:>4} {short_time(e.get('startedAt') or e['createdAt'])}  {e['runtime']:<8} "
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
    for key, title in _SECTIONS:
        value = snapshot.get(key)
        items = [value] if isinstance(value, dict) else list(value or [])
        if not items:
            continue
        lines.append(f"  {title}")
        for item in items:
            # Open items show their id: `alp context pin resolve -- ID` closes one.
            line_id = f"{item['id']}  " if key == "openItems" else ""
            lines.append(f"    - {line_id}{item['text']}   [{item['sourceExecutionId']}]")
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


def thread_show(result: dict[str, Any]) -> str:
    parts = [thread_header(result["thread"]), "", "roots"]
    roots = result["roots"]
    parts += [f"  {execution_line(e)}" for e in roots] or ["  (none yet: `alp thread continue ID`)"]
    if result.get("children"):
        parts.append(f"  + {result['children']} delegated child execution(s)")
    parts += ["", context(result["context"]), ""]
    history = result["history"]
    parts.append(f"history  {history['level']}, {history.get('entries', 0)} entries")
    parts += [root_history(root) for root in history.get("byRoot", [])]
    return "\n".join(parts)


def execution(e: dict[str, Any]) -> str:
    lines = [execution_line(e), f"  policy {e['policyHash']}"]
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
    return "\n".join(
        [
            f"{where}  {short_time(hit.get('at'))}  {who}".rstrip(),
            f"    {_one_line(hit['snippet'])}",
            f"    → {open_it}",
        ]
    )


def search(result: dict[str, Any]) -> str:
    hits = result["hits"]
    if not hits:
        return "no matches (`alp import claude|codex` indexes sessions from before alp)"
    return "\n\n".join(search_hit(hit) for hit in hits)


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
    known = f", {result['known']} already in threads" if result.get("known") else ""
    skipped = f", {result['skipped']} lines skipped" if result.get("skipped") else ""
    return (
        f"imported {result['imported']} new {result['runtime']} sessions, "
        f"updated {result['updated']}{known} ({result['files']} files under {result['path']}): "
        f"{result['added']} entries added{skipped}\n"
        f"search them with `alp search WORDS`"
    )
