"""The timeline of `alp thread show`: roots and the clears and undos between them.

A root opened on context revision r and projected r+1; a step wrote revision s. So a root sits
after the steps up to r and before those from r+1 on, and the lines are ordered by revision.
A root whose history a step labelled says so (`[undone]`, `[before clear]`).
"""

from __future__ import annotations

from alpctl.clock import local_time
from alpctl.render import execution_line

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["step_line", "timeline"]


def step_line(step: dict[str, Any], roots: dict[str, dict[str, Any]]) -> str:
    """One clear or undo: what it wrote, what it replaced, who asked and when."""
    when = local_time(step.get("at"))
    who = f"by {step.get('by', '?')} via {step.get('door', '?')}"
    if step["kind"] == "clear":
        what = f"clear       rev {step['revision']} empty (rev {step['replacedRevision']} kept)"
    else:
        root = roots.get(step.get("executionId") or "", {})
        seq = f"#{root['sequence']}" if root.get("sequence") is not None else "?"
        what = (
            f"undo of root {seq}  rev {step['revision']} = rev {step['restoredRevision']} "
            f"(rev {step['replacedRevision']} kept)"
        )
    return f"  ── {what}  {when}  {who}"


def timeline(roots: list[dict[str, Any]], steps: list[dict[str, Any]]) -> list[str]:
    """Root and step lines, oldest first."""
    by_id = {root["id"]: root for root in roots}
    undone = {step.get("executionId") for step in steps if step["kind"] == "undo"}
    clears = [step["revision"] for step in steps if step["kind"] == "clear"]
    keyed: list[tuple[float, str]] = []
    for root in roots:
        opened = root.get("contextRevision") or 0
        marks = ""
        if any(clear > opened for clear in clears):
            marks += "  [before clear]"
        if root["id"] in undone:
            marks += "  [undone]"
        keyed.append((opened + 0.5, f"  {execution_line(root)}{marks}"))
    keyed += [(float(step["revision"]), step_line(step, by_id)) for step in steps]
    return [line for _, line in sorted(keyed, key=lambda pair: pair[0])]
