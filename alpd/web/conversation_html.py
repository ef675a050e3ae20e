"""The conversation's list items as HTML, rendered in Python rather than in a template.

The thread page and each page the view reads (`GET /t/ID/transcript`) place the same items,
written here. A Jinja2 loop spent ~0.4 ms an item in per-piece overhead (a generator step
per output piece, a Markup object per escape; 41 ms for a page of 100 on this machine, most
of a page read); this function writes the same markup in a fraction of it
(docs/benchmarks.md). The wording is `alpd.web.conversation`'s and the Markdown
`alpd.web.markdown`'s; every value goes through `_text` as every template value goes through
`render._shown`: escaped (quotes included), C0 controls and DEL shown as their pictures.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime

from markupsafe import Markup, escape

from alpd.web import conversation as c
from alpd.web.markdown import render_markdown
from alpd.web.view import control_pictures
from protocol import messages as m


def _text(value: str) -> str:
    return control_pictures(str(escape(value)))


def _time(at: str | None, today: date) -> str:
    whole, shown = c.item_times(at, today)
    return f'<time datetime="{_text(at or "")}" title="{_text(whole)}">{_text(shown)}</time>'


def _marker(item: m.TranscriptItem, root: m.TranscriptRoot | None, badges: str, when: str) -> str:
    if item.type == "root":
        what = c.root_line(item, root)
        state = c.root_status(root) or item.status or ""
        status = (
            f' <span class="root-status" data-root="{_text(item.root_id or "")}">'
            f"{_text(state)}</span>"
        )
    else:
        what = f"recap: {item.text}" if item.type == "recap" else item.text
        status = ""
    return f'<div class="rule"><span class="what">{_text(what)}</span>{status}{badges} {when}</div>'


def _tool(tool: m.TranscriptTool) -> str:
    result = ""
    if tool.result is not None:
        label = "error" if tool.is_error else "result"
        result = f'<div class="label">{label}</div><pre>{_text(tool.result)}</pre>'
    whole = (
        '<button type="button" class="secondary whole">Show the whole call</button>'
        if tool.truncated
        else ""
    )
    return (
        f'<details class="tool{" failed" if tool.is_error else ""}">'
        f"<summary>{_text(c.tool_line(tool))}</summary>"
        f'<div class="label">input</div><pre>{_text(tool.input)}</pre>{result}{whole}</details>'
    )


def _body(item: m.TranscriptItem) -> str:
    if item.type == "tool" and item.tool:
        return _tool(item.tool)
    if item.type in c.MARKDOWN:
        return f'<div class="md">{control_pictures(str(render_markdown(item.text)))}</div>'
    if c.folded(item.text):
        return (
            f'<details class="long"><summary>{_text(c.first_line(item.text))}</summary>'
            f'<div class="text">{_text(item.text)}</div></details>'
        )
    return f'<div class="text">{_text(item.text)}</div>'


def _said(item: m.TranscriptItem, badges: str, when: str) -> str:
    status = (
        f' <span class="badge">{_text(item.status)}</span>'
        if item.status and item.type != "report"
        else ""
    )
    sequence = f' <span class="meta">#{item.sequence}</span>' if item.sequence else ""
    envelope = f'<p class="meta envelope">{_text(item.envelope)}</p>' if item.envelope else ""
    return (
        f'<div class="head"><span class="who">{_text(c.speaker(item))}</span>'
        f"{badges}{status}{sequence} {when}</div>{_body(item)}{envelope}"
    )


def item_html(item: m.TranscriptItem, root: m.TranscriptRoot | None, today: date) -> str:
    """One `<li>`: a marker's line across the view, or who said it, when, and what."""
    badges = "".join(f' <span class="badge">{_text(label)}</span>' for label in item.labels)
    when = _time(item.at, today)
    inside = (
        _marker(item, root, badges, when) if item.type in c.MARKERS else _said(item, badges, when)
    )
    provisional = " data-provisional" if c.provisional(item, root) else ""
    return (
        f'<li class="{_text(c.item_classes(item))}" data-cursor="{_text(item.cursor)}"'
        f"{provisional}>{inside}</li>"
    )


def transcript_items(
    items: Sequence[m.TranscriptItem], roots: Mapping[str, m.TranscriptRoot], now: datetime
) -> Markup:
    """The items of a page, in order, as the view's list items."""
    today = now.astimezone().date()
    return Markup(
        "\n".join(
            item_html(item, roots.get(item.root_id) if item.root_id else None, today)
            for item in items
        )
    )
