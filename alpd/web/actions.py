"""The actions (POST): each is the wire method the CLI calls for the same thing, through the
Door, so it meets the same checks and the same named errors.

On success the browser is sent back to the page it acted on (303, so a reload does not
repeat the action); on a domain error that page is rendered again with the error's name and
message and what was typed, with the error's HTTP status.

The conversation's composer (continue, push) posts the same forms from the page's script
with `Accept: application/json`, and is answered in JSON instead, so the view it sits under
keeps its place: `{"ok": true, "message": …, "result": <the wire result>}`, or
`{"ok": false, "error": {"name", "message", "data"}}` with the error's HTTP status.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from alpd.errors import AlpError
from alpd.web import conversation
from alpd.web.door import Door
from alpd.web.pages import Pages, http_status

#: what the page writes into `origin.door` and a push's source label
DOOR = "web"
PUSH_SOURCE = "web page"


async def _form(request: Request) -> dict[str, str]:
    form = await request.form()
    return {key: value for key, value in form.items() if isinstance(value, str)}


def _wants_json(request: Request) -> bool:
    return "application/json" in request.headers.get("accept", "")


def _json(answer: dict[str, Any], status: int = 200) -> Response:
    return Response(msgspec.json.encode(answer), status, media_type="application/json")


def _json_error(exc: AlpError) -> Response:
    error = {"name": exc.name, "message": exc.message, "data": exc.data}
    return _json({"ok": False, "error": error}, http_status(exc.name))


class Actions:
    def __init__(self, door: Door, pages: Pages) -> None:
        self.door = door
        self.pages = pages

    def routes(self) -> list[Route]:
        return [
            Route("/t/{thread_id}/continue", self.continue_, methods=["POST"]),
            Route("/t/{thread_id}/push", self.push, methods=["POST"]),
            Route("/t/{thread_id}/transcript", self.pages.transcript, methods=["GET"]),
            Route("/t/{thread_id}/clear", self.pages.clear, methods=["GET"]),
            Route("/t/{thread_id}/clear", self.clear, methods=["POST"]),
            Route("/t/{thread_id}/undo", self.undo, methods=["POST"]),
            Route("/t/{thread_id}/restore", self.pages.restore, methods=["GET"]),
            Route("/t/{thread_id}/restore", self.restore, methods=["POST"]),
            Route("/schedules/{schedule_id}/pause", self.pause, methods=["POST"]),
            Route("/schedules/{schedule_id}/resume", self.resume, methods=["POST"]),
            Route("/inbox/{item_id}/confirm", self.confirm, methods=["POST"]),
            Route("/inbox/{item_id}/dismiss", self.dismiss, methods=["POST"]),
            Route("/t/{thread_id}/remember", self.promote, methods=["POST"]),
            Route("/memory", self.remember, methods=["POST"]),
            Route("/memory/{memory_id}/retract", self.retract, methods=["POST"]),
        ]

    async def remember(self, request: Request) -> Response:
        """The person writes a memory from the page's form (memory/add)."""
        form = await _form(request)
        scope = form.get("scope") or "workspace"
        try:
            await self.door.call(
                "memory/add",
                text=form.get("text", ""),
                kind=form.get("kind") or "fact",
                scope=scope,
                workspace=(form.get("workspace") or None) if scope == "workspace" else None,
                cwd="/",
            )
        except AlpError as exc:
            return await self.pages.memory(request, error=exc, form=form)
        return RedirectResponse("/memory", status_code=303)

    async def promote(self, request: Request) -> Response:
        """A pinned line of the thread's context becomes a memory citing it (memory/promote),
        from the Remember button beside the line."""
        form = await _form(request)
        try:
            await self.door.call(
                "memory/promote",
                thread=request.path_params["thread_id"],
                pin=form.get("pin", ""),
                kind=form.get("kind") or None,
                scope=form.get("scope") or "workspace",
            )
        except AlpError as exc:
            return await self.pages.thread(request, error=exc, form=form)
        return RedirectResponse("/memory", status_code=303)

    async def retract(self, request: Request) -> Response:
        try:
            await self.door.call("memory/retract", id=request.path_params["memory_id"])
        except AlpError as exc:
            return await self.pages.memory(request, error=exc)
        return RedirectResponse("/memory", status_code=303)

    async def _on_thread(
        self,
        request: Request,
        method: str,
        params: Callable[[dict[str, str]], dict[str, Any]],
        said: Callable[[Any], str] | None = None,
    ) -> Response:
        thread_id = request.path_params["thread_id"]
        form = await _form(request)
        as_json = said is not None and _wants_json(request)
        try:
            result = await self.door.call(method, thread_id=thread_id, **params(form))
        except AlpError as exc:
            if as_json:
                return _json_error(exc)
            return await self.pages.thread(request, error=exc, form=form)
        if as_json and said is not None:
            return _json({"ok": True, "message": said(result), "result": result})
        return RedirectResponse(f"/t/{thread_id}", status_code=303)

    async def continue_(self, request: Request) -> Response:
        return await self._on_thread(
            request,
            "thread/continue",
            lambda form: {
                "headless": True,
                "prompt": form.get("prompt", ""),
                "agent": form.get("agent") or None,
                "door": DOOR,
            },
            conversation.continued,
        )

    async def push(self, request: Request) -> Response:
        """A push; the composer names its text `prompt`, the older form `text`."""
        return await self._on_thread(
            request,
            "thread/push",
            lambda form: {
                "text": form.get("text") or form.get("prompt", ""),
                "source": PUSH_SOURCE,
                "agent": form.get("agent") or None,
                "door": DOOR,
            },
            conversation.pushed,
        )

    async def clear(self, request: Request) -> Response:
        return await self._on_thread(request, "thread/clear", lambda form: {"door": DOOR})

    async def undo(self, request: Request) -> Response:
        return await self._on_thread(request, "thread/undo", lambda form: {"door": DOOR})

    async def restore(self, request: Request) -> Response:
        """The files back to before a step, as confirmed on the restore page."""
        thread_id = request.path_params["thread_id"]
        form = await _form(request)
        root = form.get("root", "")
        try:
            await self.door.call(
                "thread/restore",
                thread_id=thread_id,
                root=int(root) if root.isdigit() else None,
                force=form.get("force") == "1",
            )
        except AlpError as exc:
            return await self.pages.restore(request, error=exc)
        return RedirectResponse(f"/t/{thread_id}#files", status_code=303)

    async def _on_schedule(self, request: Request, method: str) -> Response:
        try:
            await self.door.call(method, schedule_id=request.path_params["schedule_id"])
        except AlpError as exc:
            return await self.pages.schedules(request, error=exc)
        return RedirectResponse("/schedules", status_code=303)

    async def pause(self, request: Request) -> Response:
        return await self._on_schedule(request, "schedule/pause")

    async def resume(self, request: Request) -> Response:
        return await self._on_schedule(request, "schedule/resume")

    async def _on_inbox(self, request: Request, method: str) -> Response:
        try:
            await self.door.call(method, id=request.path_params["item_id"])
        except AlpError as exc:
            return await self.pages.inbox(request, error=exc)
        return RedirectResponse("/inbox", status_code=303)

    async def confirm(self, request: Request) -> Response:
        return await self._on_inbox(request, "inbox/confirm")

    async def dismiss(self, request: Request) -> Response:
        item_id = request.path_params["item_id"]
        method = "memory/dismiss" if item_id.startswith("prop_") else "inbox/dismiss"
        return await self._on_inbox(request, method)
