"""Human-readable output of the CLI. Pure functions: result dicts in, text out."""

from __future__ import annotations

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
        f"  created    {short_time(thread['createdAt'])}   updated {short_time(thread['updatedAt'])}",
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
