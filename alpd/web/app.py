"""The page's routes, behind the Guard (alpd.web.guard) that every request passes first.

GET pages read (alpd.web.pages), POST actions change (alpd.web.actions), `/events` streams
the daemon's notifications (alpd.web.stream), `/login` turns a one-time code into the cookie,
`/static/` holds one script and one stylesheet. Every path is listed here.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp

from alpd.web.actions import Actions
from alpd.web.door import Door
from alpd.web.guard import COOKIE, LOGIN_PATH, Guard
from alpd.web.pages import Pages
from alpd.web.stream import EventStreams


def login_route(redeem: Callable[[str], bool], token: Callable[[], str]) -> Route:
    async def login(request: Request) -> Response:
        code = request.query_params.get("code", "")
        if not code or not redeem(code):
            return PlainTextResponse(
                "401 this login URL was used already or has expired: run `alp web` for a new one\n",
                status_code=401,
            )
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, token(), httponly=True, samesite="strict", path="/")
        return response

    return Route(LOGIN_PATH, login)


def routes(door: Door, streams: EventStreams) -> list[BaseRoute]:
    pages = Pages(door)
    actions = Actions(door, pages)
    return [
        Route("/", pages.threads),
        Route("/t/{thread_id}", pages.thread),
        Route("/search", pages.search),
        Route("/ps", pages.running),
        Route("/schedules", pages.schedules),
        Route("/inbox", pages.inbox),
        Route("/memory", pages.memory),
        Route("/events", streams.endpoint),
        *actions.routes(),
        Mount("/static", StaticFiles(packages=[("alpd.web", "static")]), name="static"),
    ]


def build_app(
    door: Door,
    streams: EventStreams,
    redeem: Callable[[str], bool],
    token: Callable[[], str],
    port: Callable[[], int],
    address: Callable[[], str] = lambda: "127.0.0.1",
) -> ASGIApp:
    app = Starlette(routes=[login_route(redeem, token), *routes(door, streams)])
    return Guard(app, token=token, port=port, address=address)
