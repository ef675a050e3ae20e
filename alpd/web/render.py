"""The HTML: Jinja2 templates shipped in the package (alpd/web/templates/), autoescaped.

Filters are the pure formatters of alpd.web.view; `now` is passed by the page that renders.
"""

from __future__ import annotations

from typing import Any

import jinja2
from markupsafe import Markup
from starlette.responses import HTMLResponse

from alpd.web import conversation, view
from alpd.web.conversation_html import transcript_items
from alpd.web.listing import thread_rows
from alpd.web.view import control_pictures


def _shown(value: Any) -> Any:
    """Every `{{ … }}` goes through here before autoescaping: controls become pictures
    (`view.control_pictures`)."""
    if isinstance(value, Markup):
        return Markup(control_pictures(str(value)))
    if isinstance(value, str):
        return control_pictures(value)
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
    # the conversation (alpd.web.conversation, its items alpd.web.conversation_html)
    transcript_items=transcript_items,
    root_status=conversation.root_status,
)


#: what base.html reads, for the pages that have none of it: no error, no live updates
_BASE: dict[str, Any] = {"error": None, "live": None, "href": None}


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = _ENV.get_template(name).render({**_BASE, **context})
    return HTMLResponse(html, status_code=status)
