"""Text for `alp handoff`, `alp inbox` and the handoffs of `alp thread show`: dicts in,
lines out. Stdlib only, like the rest of alpctl."""

from __future__ import annotations

from alpctl.clock import local_time

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["confirmed", "handoff_line", "inbox", "sent", "thread_handoffs"]

_PATHS = {
    "wake": "woke it",
    "queue": "queued for its next round",
    "inject": "taken mid-run",
    "inbox": "held in its inbox",
}
#: the path of a handoff that has not arrived yet, where it differs from the arrived one
_WAITING = {"inject": "waiting for its running root to take it mid-run"}


def _title(h: dict[str, Any], side: str) -> str:
    return str(h.get(f"{side}Title") or h[f"{side}ThreadId"])


def handoff_line(h: dict[str, Any], direction: str = "out") -> str:
    """`<time>  to|from <thread>  <status>, <how>  (hop n)  <first line of the summary>`."""
    other = f"to {_title(h, 'target')}" if direction == "out" else f"from {_title(h, 'source')}"
    path = h.get("path") or ""
    how = _PATHS.get(path, "") if h.get("deliveredAt") else _WAITING.get(path, _PATHS.get(path, ""))
    state = (
        h["status"] if h["status"] != "sent" else "delivered" if h.get("deliveredAt") else "sent"
    )
    detail = f"{state}, {how}" if how else state
    if h.get("deliveredExecutionId"):
        detail += f" → {h['deliveredExecutionId']}"
    first = (h["summary"].splitlines() or [""])[0]
    if len(first) > 60:
        first = first[:59] + "…"
    return f"  {local_time(h['sentAt'])}  {other}  {detail}  (hop {h['hop']})  {first}"


def sent(result: dict[str, Any]) -> str:
    h = result["handoff"]
    target = _title(h, "target")
    if h["status"] == "inbox":
        return (
            f"{h['id']}: held in {target}'s inbox until you confirm it "
            f"(`alp inbox confirm {h['id']}`)"
        )
    if result.get("execution"):
        return f"{h['id']}: woke {target}; {result['execution']['id']} (push) reads it"
    if h["status"] == "failed":
        return f"{h['id']}: not delivered: {h.get('error') or 'failed'}"
    return f"{h['id']}: {_busy(h)}"


def _busy(h: dict[str, Any]) -> str:
    """Where a handoff to a busy thread went: `path` is the route the daemon chose."""
    target = _title(h, "target")
    if h.get("deliveredAt"):
        how = _PATHS.get(h.get("path") or "")
        into = f"delivered into {h['deliveredExecutionId']} of {target}"
        return f"{into} ({how})" if how else into
    if h.get("path") == "inject":
        return (
            f"{target} is busy; its running root takes it mid-run, at its next tool call or "
            "prompt (its next round, if that run ends first)"
        )
    return f"queued for {target}'s next round ({target} is busy)"


def inbox(result: dict[str, Any]) -> str:
    items = result["items"]
    proposed = result.get("proposals") or []
    if not items and not proposed:
        return "your inbox is empty"
    lines = []
    for h in items:
        lines.append(
            f"{h['id']}  {local_time(h['sentAt'])}  for {_title(h, 'target')}  "
            f"from {_title(h, 'source')}"
        )
        lines += [f"    {line}" for line in h["summary"].splitlines()]
        lines += [f"    artifact {a['path']} ({a['size']} bytes)" for a in h.get("artifacts", [])]
    if proposed:
        from alpctl.memory_render import proposals

        lines += proposals(proposed)
    lines.append(
        "`alp inbox confirm ID` delivers a handoff as your own words, or makes a proposal a "
        "memory; `alp inbox dismiss ID` drops it"
    )
    return "\n".join(lines)


def confirmed(result: dict[str, Any]) -> str:
    if result.get("memory"):
        return f"{result['proposal']['id']}: confirmed; memory {result['memory']['id']} written"
    h = result["item"]
    if result.get("execution"):
        return f"{h['id']}: confirmed; woke {_title(h, 'target')} ({result['execution']['id']})"
    return f"{h['id']}: confirmed; {_busy(h)}"


def thread_handoffs(result: dict[str, Any]) -> list[str]:
    """The handoffs section of `alp thread show` (nothing when there are none)."""
    lines: list[str] = []
    if result.get("handoffsIn"):
        lines += ["", "handoffs in", *(handoff_line(h, "in") for h in result["handoffsIn"])]
    if result.get("handoffsOut"):
        lines += ["", "handoffs out", *(handoff_line(h, "out") for h in result["handoffsOut"])]
    return lines
