"""The HTML: Jinja2 templates shipped in the package (alpd/web/templates/), autoescaped.

Filters are the pure formatters of alpd.web.view; `now` is passed by the page that renders.
"""

from __future__ import annotations

from typing import Any

import jinja2
from markupsafe import Markup
from starlette.responses import HTMLResponse

from alpd.web import conversation, view
from alpd.web.listing import thread_rows
from alpd.web.markdown import render_markdown

#: C0 controls but tab, newline, form feed and carriage return, and DEL: HTML forbids them in
#: a page (a NUL is a parse error the browser turns into U+FFFD, or worse, and ends a C string
#: in tools that read the page); they are shown as their Unicode control pictures (␀, ␇ …)
_CONTROLS = {c: 0x2400 + c for c in range(0x20) if chr(c) not in "\t\n\f\r"} | {0x7F: 0x2421}


def _shown(value: Any) -> Any:
    """Every `{{ … }}` goes through here before autoescaping: controls become pictures."""
    if isinstance(value, Markup):
        return Markup(str(value).translate(_CONTROLS))
    if isinstance(value, str):
        return value.translate(_CONTROLS)
    return value


_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("alpd.web", "templates"),
    autoescape=True,
    finalize=_shown,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters.update(
    money=view.money,
    local_time=view.local_time,
    duration=view.duration,
    origin=view.origin_label,
    outcome=view.outcome_label,
)
_ENV.globals.update(
    ago=view.ago,
    context_sections=view.context_sections,
    thread_rows=thread_rows,
    snippet_parts=view.snippet_parts,
    # the conversation (alpd.web.conversation)
    markdown=render_markdown,
    markdown_types=conversation.MARKDOWN,
    item_classes=conversation.item_classes,
    item_time=conversation.item_time,
    provisional=conversation.provisional,
    speaker=conversation.speaker,
    tool_line=conversation.tool_line,
    folded=conversation.folded,
    first_line=conversation.first_line,
    root_line=conversation.root_line,
    root_status=conversation.root_status,
)


#: what base.html reads, for the pages that have none of it: no error, no live updates
_BASE: dict[str, Any] = {"error": None, "live": None, "href": None}


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = _ENV.get_template(name).render({**_BASE, **context})
    return HTMLResponse(html, status_code=status)
