"""Human text for a thread's recap (`alp thread show`) and whether recaps run (`alp ps`).

The recap is labelled as derived wherever it is printed: a model made it from history; the
pinned context is what the thread's runs actually carry forward with authority of record.
"""

from __future__ import annotations

from alpctl.clock import local_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def recap_block(recap: dict[str, Any]) -> list[str]:
    """The recap section of `alp thread show`: gist and open tasks, or why there is none."""
    state = recap.get("state", {})
    lines = ["recap (derived from history by a model; not authority)"]
    if recap.get("gist"):
        made = (
            f"made {local_time(recap.get('madeAt'))} "
            f"from context revision {recap.get('sourceRevision')}"
        )
        lines += [f"  {recap.get('headline', '')}", f"  ({made})", ""]
        lines += [f"  {line}" for line in recap["gist"].splitlines()]
        tasks = recap.get("openTasks") or []
        lines += ["", "  open tasks" + ("" if tasks else ": none")]
        lines += [f"    - {task}" for task in tasks]
    elif state.get("available"):
        lines.append("  none yet: made after the thread's next few settled runs")
    if recap.get("refreshing"):
        lines.append("  (a refresh is running)")
    if not state.get("available"):
        lines.append(f"  off: {state.get('reason')}")
        lines.append(f"  to turn it on: {state.get('hint')}")
    return lines


def recap_state_line(state: dict[str, Any] | None) -> str | None:
    """`alp ps`: one line when recaps cannot run, saying why and how to turn them on."""
    if not state or state.get("available"):
        return None
    return f"RECAP off: {state.get('reason')}; to turn it on: {state.get('hint')}"
