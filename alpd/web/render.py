"""The HTML: Jinja2 templates shipped in the package (alpd/web/templates/), autoescaped.

Filters are the pure formatters of alpd.web.view; `now` is passed by the page that renders.
"""

from __future__ import annotations

from typing import Any

import jinja2
from starlette.responses import HTMLResponse

from alpd.web import view
from alpd.web.listing import thread_rows

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("alpd.web", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)
_ENV.filters.update(
    money=view.money,
    duration=view.duration,
    origin=view.origin_label,
    outcome=view.outcome_label,
)
_ENV.globals.update(
    ago=view.ago,
    context_sections=view.context_sections,
    thread_rows=thread_rows,
    snippet_parts=view.snippet_parts,
)


#: what base.html reads, for the pages that have none of it: no error, no live updates
_BASE: dict[str, Any] = {"error": None, "live": None, "href": None}


def render(name: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = _ENV.get_template(name).render({**_BASE, **context})
    return HTMLResponse(html, status_code=status)
