"""How `alp memory …` and the inbox's memory proposals print."""

from __future__ import annotations

from alpctl.clock import local_time

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def memory_line(memory: dict[str, Any]) -> str:
    scope = "global" if memory["scope"] == "global" else "workspace"
    status = "" if memory["status"] == "active" else f" [{memory['status']}]"
    return (
        f"{memory['id']}  {memory['kind']}, {scope}, v{memory['version']}, confirmed "
        f"{local_time(memory['confirmedAt'])}{status}\n    {memory['text']}"
    )


def memory_list(result: dict[str, Any]) -> str:
    memories = result["memories"]
    lines = [memory_line(memory) for memory in memories] or ["no memories"]
    for memory_id in result.get("tampered") or []:
        lines.append(f"{memory_id}  MEMORY_TAMPERED: left out (`alp memory show {memory_id}`)")
    return "\n".join(lines)


def memory_written(memory: dict[str, Any]) -> str:
    return memory_line(memory)


def memory_show(result: dict[str, Any]) -> str:
    lines = [memory_line(result["memory"]), f"  cites: {result['citation']['text']}"]
    if result["citation"].get("lineText"):
        lines.append(f"  the line: {result['citation']['lineText']}")
    for entry in result["citation"].get("entries") or []:
        lines.append(f"  {cited_entry(entry)}")
    lines.append("  versions (chain verified)")
    for v in result["versions"]:
        lines.append(
            f"    v{v['version']} {v['change']} {v['at']} by {v['provenance']['by']} via "
            f"{v['provenance']['door']} [{v['status']}]  {v['digest'][:19]}…"
        )
        lines.append(f"      {v['text']}")
    return "\n".join(lines)


def cited_entry(entry: dict[str, Any]) -> str:
    """`entry 812: assistant reply in 'checkout' (thread_…) 2026-12-02 09:41 CET: text…`"""
    if not entry.get("exists"):
        return f"entry {entry['id']}: gone (its thread was deleted); the id is all that is left"
    what = " ".join(x for x in (entry.get("role"), entry.get("kind")) if x) or "entry"
    where = (
        f" in {entry.get('threadTitle') or '(untitled)'!r} ({entry['threadId']})"
        if entry.get("threadId")
        else f" of {entry.get('executionId')}"
    )
    at = f" {local_time(entry['at'])}" if entry.get("at") else ""
    return f"entry {entry['id']}: {what}{where}{at}: {entry.get('excerpt') or ''}"


def memory_review(result: dict[str, Any]) -> str:
    lines: list[str] = []
    if result.get("confirmed"):
        lines += ["confirmed", *(memory_line(m) for m in result["confirmed"])]
    lines.append("not confirmed lately" if result["stale"] else "none left unconfirmed too long")
    lines += [memory_line(m) for m in result["stale"]]
    if result["changed"]:
        lines.append("cited file changed since")
        for change in result["changed"]:
            now = change.get("nowSha256")
            what = "is gone" if now is None else "changed"
            lines.append(f"{memory_line(change['memory'])}\n    {change['filePath']} {what}")
    lines.append(
        "`alp memory review --confirm ID` if still true; `alp memory supersede ID -- TEXT` or "
        "`alp memory retract ID` if not"
    )
    return "\n".join(lines)


def proposals(items: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for p in items:
        lines.append(
            f"{p['id']}  {local_time(p['proposedAt'])}  memory proposal ({p['kind']}, {p['scope']})"
        )
        lines.append(f"    {p['text']}")
        lines.append(f"    {p['origin']}")
    return lines
