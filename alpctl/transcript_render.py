"""Conversation text for a terminal: `alp thread log`'s items, and the lines of Claude's
stream-json and Codex's JSONL (`--follow`, `alp execution logs`) in the same shape.

Pure functions (stdlib only): an item or a JSON line in, text out. The runtime's own error
line is found by `protocol.runtime_output` (the daemon's reports use the same rule). One shape
everywhere: `HH:MM ZONE speaker  text` wrapped to the width under its text column; a tool
call on one line (`⚙ name input → result`); markers dimmed. Colour comes from the caller's `Style`
(plain unless stdout is a terminal).
"""

from __future__ import annotations

import json
import re

from alpctl.clock import local_time
from protocol.runtime_output import event_of, one_line, runtime_error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from alpctl.render import Style

#: characters of a tool's input and result on its one line
TOOL_CHARS = 80

_SPEAKERS = {"person": "you", "assistant": "assistant", "tool": "tool", "system": "system"}

#: what textwrap would cut or drop other than at single spaces: whitespace but the space (any
#: Unicode whitespace: textwrap drops a chunk that `str.strip` empties), a hyphen, two spaces,
#: a space at either end
_NOT_PLAIN = re.compile(r"[^\S ]|-|  |^ | $")


def local_clock(iso: str | None) -> str:
    """`HH:MM ZONE` in local time (a date first when it is not today's): `alpctl.clock`'s."""
    return local_time(iso, today_short=True) if iso else "     "


def _block(head: str, text: str, width: int) -> str:
    """`head` then `text` wrapped to `width`, continuation lines under the text's column."""
    width = max(width, 20)
    indent = " " * min(len(head), max(width // 3, 4))
    lines: list[str] = []
    first = True
    for paragraph in (text or "").splitlines() or [""]:
        lead, is_first, first = (head if first else indent), first, False
        if _fits(paragraph, lead, width):
            lines.append(lead + paragraph)  # what textwrap would make of it, at a tenth the cost
            continue
        filled = _fill(paragraph, lead, indent, width)
        if filled is not None:
            lines.extend(filled)
            continue
        import textwrap  # only for a paragraph neither short cut takes

        wrapped = textwrap.wrap(
            paragraph,
            width=width,
            initial_indent=lead,
            subsequent_indent=indent,
            replace_whitespace=False,
            drop_whitespace=True,
        ) or [head.rstrip() if is_first else ""]
        lines.extend(wrapped)
    return "\n".join(lines)


def _fill(paragraph: str, lead: str, indent: str, width: int) -> list[str] | None:
    """textwrap's lines for a paragraph of words parted by single spaces, each word short
    enough for any line: each line ends at the last space that leaves it within the width,
    as textwrap's greedy fill ends it (a page of replies in a third of textwrap's time);
    None for any other paragraph, which textwrap wraps."""
    if not paragraph or _NOT_PLAIN.search(paragraph):
        return None
    if len(max(paragraph.split(" "), key=len)) > width - max(len(lead), len(indent)):
        return None
    lines: list[str] = []
    prefix, start, size = lead, 0, len(paragraph)
    while size - start > width - len(prefix):
        cut = paragraph.rfind(" ", start, start + width - len(prefix) + 1)
        lines.append(prefix + paragraph[start:cut])
        prefix, start = indent, cut + 1
    lines.append(prefix + paragraph[start:])
    return lines


def _fits(line: str, lead: str, width: int) -> bool:
    """Whether `textwrap.wrap(line, width, initial_indent=lead, …)` is `[lead + line]`: it
    fits, has something to show, no tab to expand and no whitespace at its edges to drop."""
    return len(lead) + len(line) <= width and line.strip() == line != "" and "\t" not in line


def tool_line(name: str, tool_input: str, result: str | None, is_error: bool) -> str:
    shown = f"⚙ {name} {one_line(tool_input, TOOL_CHARS)}".rstrip()
    if result is not None:
        mark = "✗" if is_error else "→"
        shown += f" {mark} {one_line(result, TOOL_CHARS) or '(no output)'}"
    return shown


def render_item(item: dict[str, Any], width: int, style: Style) -> str:
    """One `thread/transcript` item as terminal text."""
    plain_clock = local_clock(item.get("at"))
    clock = style.dim(plain_clock)
    kind = item.get("type", "")
    labels = item.get("labels") or []
    suffix = style.dim(f"  [{', '.join(labels)}]") if labels and kind == "root" else ""
    if kind == "tool":
        tool = item.get("tool") or {}
        line = tool_line(
            tool.get("name", "tool"), tool.get("input", ""), tool.get("result"),
            bool(tool.get("isError")),
        )  # fmt: skip
        return f"{clock} {style.dim(one_line(line, max(width - 20, 40)))}"
    if kind in ("root", "clear", "undo", "compaction"):
        text = item.get("text", "")
        status = item.get("status")
        if kind == "root" and status:
            text += f" · {status}"
        if kind == "root":
            return style.bold(f"── {text} ──") + suffix
        return style.yellow(f"── {text}")
    if kind in ("prompt", "reply", "error"):
        who = _SPEAKERS.get(item.get("speaker", ""), item.get("speaker", ""))
        paint = style.red if kind == "error" else style.green if who == "you" else style.bold
        head = f"{clock} {paint(who)}  "
        visible = len(plain_clock) + len(who) + 3
        return _block(" " * visible, item.get("text", ""), width).replace(" " * visible, head, 1)
    # deliveries, handoffs, reports, the recap: who sent it, then the words
    label = {
        "push": f"push from {item.get('source') or '?'}",
        "scheduled": "scheduled",
        "sub-agent": "sub-agent result",
        "handoff-in": f"handoff from {item.get('source') or item.get('threadId') or '?'}",
        "handoff-out": f"handoff to {item.get('source') or item.get('threadId') or '?'}",
        "report": f"report ({item.get('status') or '?'})",
        "recap": "recap",
    }.get(kind, kind)
    head = f"{plain_clock} {label}  "
    return style.yellow(_block(head, item.get("text", ""), width))


def render_page(result: dict[str, Any], width: int, style: Style) -> str:
    return "\n".join(render_item(item, width, style) for item in result.get("items", []))


# The runtimes' own streams


def _claude(event: dict[str, Any], width: int, style: Style) -> list[str]:
    kind = event.get("type")
    out: list[str] = []
    if kind == "assistant" or kind == "user":
        message = event.get("message") or {}
        content = message.get("content")
        who = "assistant" if kind == "assistant" else "person"
        if isinstance(content, str):
            out.append(render_item({"type": "prompt", "speaker": who, "text": content,
                                    "at": event.get("timestamp")}, width, style))  # fmt: skip
            return out
        for block in content or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text" and block.get("text"):
                out.append(render_item({"type": "reply", "speaker": who, "text": block["text"],
                                        "at": event.get("timestamp")}, width, style))  # fmt: skip
            elif block.get("type") == "tool_use":
                raw = json.dumps(block.get("input", {}), ensure_ascii=False)
                out.append(style.dim(tool_line(block.get("name", "tool"), raw, None, False)))
            elif block.get("type") == "tool_result":
                result = block.get("content")
                if isinstance(result, list):
                    result = " ".join(
                        part.get("text", "") for part in result if isinstance(part, dict)
                    )
                mark = "✗" if block.get("is_error") else "→"
                out.append(style.dim(f"  {mark} {one_line(str(result or ''), TOOL_CHARS)}"))
    elif kind == "result":
        error = runtime_error(event)
        if error:
            out.append(style.red(f"error: {error}"))
        cost = event.get("total_cost_usd")
        if cost is not None:
            out.append(style.dim(f"── done · ${cost:.4f}"))
    return out


def _codex(event: dict[str, Any], width: int, style: Style) -> list[str]:
    kind = event.get("type", "")
    item = event.get("item") or {}
    if kind == "item.completed":
        what = item.get("type")
        if what in ("agent_message", "assistant_message") and item.get("text"):
            return [render_item({"type": "reply", "speaker": "assistant", "text": item["text"]},
                                width, style)]  # fmt: skip
        if what == "reasoning" and item.get("text"):
            return [style.dim(one_line(item["text"], max(width, 40)))]
        if what == "command_execution":
            failed = item.get("exit_code") not in (0, None)
            line = tool_line("shell", str(item.get("command", "")),
                             str(item.get("aggregated_output", "")), failed)  # fmt: skip
            return [style.dim(line)]
        if what in ("mcp_tool_call", "file_change", "web_search"):
            return [style.dim(tool_line(what, json.dumps(item, ensure_ascii=False), None, False))]
    if kind in ("error", "turn.failed"):
        error = runtime_error(event)
        return [style.red(f"error: {error}")] if error else []
    return []


def render_stream_line(line: str, width: int, style: Style) -> str | None:
    """A line of a runtime's output as conversation text; None for a line with nothing to
    show (init, usage, turn markers); the line itself when it is not JSON."""
    if not line.strip():
        return None
    event = event_of(line)
    if event is None:
        return line.rstrip("\n")
    kind = str(event.get("type", ""))
    if kind in ("assistant", "user", "result", "system"):
        lines = _claude(event, width, style)
    else:
        lines = _codex(event, width, style)
    return "\n".join(lines) if lines else None
