"""What `alp thread diff`, `alp thread undo --files` and `alp thread restore` print (stdlib,
pure): a root's changed files with their line counts and the patch; a restore's plan."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_STATUS = {"A": "added", "D": "deleted", "M": "modified", "T": "type changed"}
_ACTION = {"write": "restore", "delete": "delete ", "skip": "leave  "}


def _step(step: str) -> str:
    return f"root #{step}" if step.isdigit() else step


def diff(result: dict[str, Any]) -> str:
    step = _step(result["step"])
    files = result["files"]
    head = f"{step} of {result['threadId']} in {result['workspace']}: {len(files)} files changed"
    if result.get("running"):
        head += " (still running: against the files as they are now)"
    lines = [head]
    for item in files:
        added, deleted = item.get("added"), item.get("deleted")
        counts = "binary" if added is None else f"+{added} -{deleted}"
        lines.append(
            f"  {_STATUS.get(item['status'], item['status']):<9} {counts:>12}  {item['path']}"
        )
    for skipped in result.get("skipped", []):
        size = f" ({skipped['bytes']} bytes)" if skipped.get("bytes") else ""
        lines.append(f"  not checkpointed: {skipped['path']} — {skipped['reason']}{size}")
    if result.get("skippedMore"):
        lines.append(f"  … and {result['skippedMore']} more not checkpointed")
    if result.get("patch"):
        lines += ["", result["patch"].rstrip("\n")]
    if result.get("patchTruncated"):
        lines.append("… (patch cut; --max-patch-bytes for more)")
    return "\n".join(lines)


def plan(result: dict[str, Any]) -> str:
    """The changes a restore makes (or made)."""
    changes = result["changes"]
    undone = _step(result["undone"])
    if not changes:
        return f"nothing to restore: the files are as they were before {undone}"
    verb = "would change" if result.get("dryRun") else "changes"
    lines = [
        f"restoring the files to before {undone} {verb} {len(changes)} in {result['workspace']}:"
    ]
    lines += [f"  {_ACTION[c['action']]} {c['path']}  ({c['why']})" for c in changes]
    if result.get("changesMore"):
        lines.append(f"  … and {result['changesMore']} more")
    return "\n".join(lines)


def restored(result: dict[str, Any]) -> str:
    if not result["changes"]:
        return plan(result)
    return (
        f"restored the files to before {_step(result['undone'])} (as {result['step']}); "
        f"take it back with: alp thread undo {result['threadId']} --files"
    )
