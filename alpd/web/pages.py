"""The pages (GET): each reads through the Door with one or two wire methods and renders.

A domain error (a thread that is not there, not yours) is shown as a page with its name,
its message and the HTTP status of its kind (`http_status`). Every page names the event
stream it listens to (`live`): the script re-reads the page's live parts when one arrives.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from starlette.requests import Request
from starlette.responses import Response

from alpd.errors import AlpError
from alpd.web import conversation, view
from alpd.web.door import Door
from alpd.web.render import render
from protocol import messages as m

#: the threads page lists at most this many (newest first)
THREADS_SHOWN: Final = 1000
SEARCH_FIELDS: Final = ("q", "runtime", "role", "thread", "since", "mode")
SEARCH_MODES: Final = ("hybrid", "keyword", "meaning")
ROLES: Final = ("user", "assistant", "tool", "system")
#: the patch a thread page shows of its last step (the CLI shows more: `alp thread diff`)
PATCH_SHOWN: Final = 64 * 1024
#: items of the conversation a thread page opens with (the newest), and per older page
TRANSCRIPT_SHOWN: Final = 100


def http_status(name: str) -> int:
    """The HTTP status a page answers a domain error with."""
    if name.endswith("_NOT_FOUND"):
        return 404
    if name == "PERMISSION_DENIED":
        return 403
    if name in ("INVALID_ARGUMENT", "SCHEDULE_INVALID", "KIND_NOT_ALLOWED"):
        return 400
    if name in ("STORAGE_FULL", "SHUTTING_DOWN"):
        return 503
    return 409


def error_page(exc: AlpError, page_title: str = "Error") -> Response:
    return render(
        "error.html",
        status=http_status(exc.name),
        title=page_title,
        error=exc,
        now=_now(),
    )


def _now() -> datetime:
    return datetime.now(UTC)


def _conversation(page: m.TranscriptResult | None) -> dict[str, Any]:
    """What the conversation's items (`conversation_html.transcript_items`) read of a page
    (an empty one when it could not be read)."""
    if page is None:
        return {"items": [], "roots": {}, "attributes": conversation.page_attributes(None)}
    return {
        "items": page.items,
        "roots": conversation.roots_by_id(page.roots),
        "attributes": conversation.page_attributes(page),
    }


class Pages:
    def __init__(self, door: Door) -> None:
        self.door = door

    async def threads(self, request: Request) -> Response:
        try:
            listed: m.ThreadListResult = await self.door.call(
                "thread/list", all=True, statuses=["open", "closed"], limit=THREADS_SHOWN
            )
        except AlpError as exc:
            return error_page(exc)
        return render(
            "threads.html",
            title="Threads",
            threads=listed.threads,
            shown=THREADS_SHOWN,
            live="/events",
            href="/",
            now=_now(),
        )

    async def thread(
        self,
        request: Request,
        *,
        error: AlpError | None = None,
        form: dict[str, str] | None = None,
    ) -> Response:
        thread_id = request.path_params["thread_id"]
        try:
            shown: m.ThreadShowResult = await self.door.call("thread/show", thread_id=thread_id)
            schedules: m.ScheduleListResult = await self.door.call(
                "schedule/list", thread_id=thread_id
            )
        except AlpError as exc:
            return error_page(exc, "Thread")
        transcript: m.TranscriptResult | None = None
        transcript_error: AlpError | None = None
        try:
            transcript = await self.door.call(
                "thread/transcript", thread_id=thread_id, limit=TRANSCRIPT_SHOWN
            )
        except AlpError as exc:
            transcript_error = exc
        return render(
            "thread.html",
            **_conversation(transcript),
            transcript_error=transcript_error,
            files=None if shown.thread.busy_root else await self._files(thread_id),
            status=http_status(error.name) if error else 200,
            title=shown.thread.title or thread_id,
            shown=shown,
            schedules=schedules.schedules,
            snapshot=shown.context.snapshot,
            error=error,
            form=form or {},
            live=f"/events?thread={thread_id}",
            href=f"/t/{thread_id}",
            now=_now(),
        )

    async def transcript(self, request: Request) -> Response:
        """One page of the conversation, as list items for the script to place:
        `?before=C` (older), `?after=C` (newer), `full=1` (a tool call's whole text)."""
        query = request.query_params
        limit = query.get("limit", "")
        try:
            page: m.TranscriptResult = await self.door.call(
                "thread/transcript",
                thread_id=request.path_params["thread_id"],
                before=query.get("before"),
                after=query.get("after"),
                limit=int(limit) if limit.isdigit() else TRANSCRIPT_SHOWN,
                full=query.get("full") == "1",
            )
        except AlpError as exc:
            return render("transcript.html", status=http_status(exc.name), error=exc)
        return render("transcript.html", page=page, **_conversation(page), now=_now())

    async def clear(self, request: Request) -> Response:
        """Clear asks first: what it does, and the form that does it."""
        thread_id = request.path_params["thread_id"]
        try:
            shown: m.ThreadShowResult = await self.door.call("thread/show", thread_id=thread_id)
        except AlpError as exc:
            return error_page(exc, "Clear")
        return render(
            "clear.html",
            title="Clear the context",
            thread_id=thread_id,
            thread_title=shown.thread.title or thread_id,
            href=f"/t/{thread_id}",
            now=_now(),
        )

    async def _files(self, thread_id: str) -> m.ThreadDiffResult | None:
        """What the last step did to the files (None without a checkpoint)."""
        try:
            diff: m.ThreadDiffResult = await self.door.call(
                "thread/diff", thread_id=thread_id, max_patch_bytes=PATCH_SHOWN
            )
        except AlpError:
            return None
        return diff

    async def restore(
        self, request: Request, *, error: AlpError | None = None, status: int = 200
    ) -> Response:
        """What a file restore would change, and a form to do it: the page asks first."""
        thread_id = request.path_params["thread_id"]
        root = request.query_params.get("root", "")
        force = request.query_params.get("force") == "1"
        try:
            plan: m.ThreadRestoreResult = await self.door.call(
                "thread/restore",
                thread_id=thread_id,
                root=int(root) if root.isdigit() else None,
                force=force,
                dry_run=True,
            )
        except AlpError as exc:
            plan, error = None, error or exc  # type: ignore[assignment]
        return render(
            "restore.html",
            status=http_status(error.name) if error else status,
            title="Restore the files",
            thread_id=thread_id,
            root=root,
            force=force,
            plan=plan,
            error=error,
            href=f"/t/{thread_id}",
            now=_now(),
        )

    async def search(self, request: Request) -> Response:
        query = {key: request.query_params.get(key, "").strip() for key in SEARCH_FIELDS}
        context: dict[str, Any] = {"title": "Search", "query": query, "roles": ROLES}
        context["modes"] = SEARCH_MODES
        hits: list[m.SearchHit] = []
        error: AlpError | None = None
        notice: str | None = None
        if query["q"]:
            params = {
                "query": query["q"],
                "runtime": query["runtime"] or None,
                "role": query["role"] or None,
                "thread_id": query["thread"] or None,
                "since": query["since"] or None,
                "mode": query["mode"] if query["mode"] in SEARCH_MODES else "hybrid",
                "highlight_start": view.MARK_START,
                "highlight_end": view.MARK_END,
            }
            try:
                found: m.HistorySearchResult = await self.door.call("history/search", **params)
                hits, notice = found.hits, found.notice
            except AlpError as exc:
                error = exc
        return render(
            "search.html",
            status=http_status(error.name) if error else 200,
            hits=hits,
            error=error,
            notice=notice,
            now=_now(),
            **context,
        )

    async def running(self, request: Request) -> Response:
        try:
            ps: m.PsResult = await self.door.call("daemon/ps")
        except AlpError as exc:
            return error_page(exc, "Running")
        return render(
            "running.html", title="Running", ps=ps, live="/events", href="/ps", now=_now()
        )

    async def schedules(self, request: Request, *, error: AlpError | None = None) -> Response:
        try:
            listed: m.ScheduleListResult = await self.door.call("schedule/list")
        except AlpError as exc:
            return error_page(exc, "Schedules")
        return render(
            "schedules.html",
            status=http_status(error.name) if error else 200,
            title="Schedules",
            schedules=listed.schedules,
            error=error,
            live="/events",
            href="/schedules",
            now=_now(),
        )

    async def inbox(self, request: Request, *, error: AlpError | None = None) -> Response:
        try:
            listed: m.InboxListResult = await self.door.call("inbox/list")
        except AlpError as exc:
            return error_page(exc, "Inbox")
        return render(
            "inbox.html",
            status=http_status(error.name) if error else 200,
            title="Inbox",
            items=listed.items,
            proposals=listed.proposals,
            error=error,
            live="/events",
            href="/inbox",
            now=_now(),
        )

    async def memory(
        self,
        request: Request,
        *,
        error: AlpError | None = None,
        form: dict[str, str] | None = None,
    ) -> Response:
        """Every memory of yours, and a small form to write one (memory/add)."""
        try:
            listed: m.MemoryListResult = await self.door.call("memory/list", all=True)
            threads: m.ThreadListResult = await self.door.call(
                "thread/list", all=True, limit=THREADS_SHOWN
            )
        except AlpError as exc:
            return error_page(exc, "Memory")
        return render(
            "memory.html",
            status=http_status(error.name) if error else 200,
            title="Memory",
            memories=listed.memories,
            tampered=listed.tampered,
            workspaces=sorted({t.workspace for t in threads.threads}),
            error=error,
            form=form or {},
            href="/memory",
            now=_now(),
        )
