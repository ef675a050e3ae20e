"""From a decoded frame to reply bytes: parse, validate params, call the handler, and
translate every failure into a JSON-RPC error object — the one place that does so.

No traceback ever reaches the wire: an unexpected exception is logged with its traceback
and answered with a bare -32603.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
import msgspec
import structlog

from alpd.errors import AlpError, InvalidArgument
from alpd.services.context import Caller
from protocol import errors, jsonrpc
from protocol.methods import COMMON_ERRORS, METHODS, NAMED_THREAD_METHODS, MethodSpec

log = structlog.get_logger("alpd.rpc")

#: where msgspec says the invalid value is: "… - at `$.exitCode`" (absent for the whole object)
_AT_FIELD = re.compile(r" - at `\$\.?(.*)`$")


class Session(Protocol):
    """What a handler may know of the connection it serves."""

    caller: Caller
    #: the door the daemon names in the origin of a run started here (`cli`, `web`)
    door: str

    def subscribe(self, methods: frozenset[str] | None, thread_id: str | None) -> None: ...


Handler = Callable[[Session, Any], Awaitable[Any]]
#: the params with their thread named by id (`alpd.services.threads.refs.resolve_params`)
Resolver = Callable[[Session, Any], Awaitable[Any]]


@dataclass(frozen=True, slots=True)
class Bound:
    spec: MethodSpec
    handler: Handler
    #: the domain errors the OpenRPC document lists for the method (its own and the common)
    declared: frozenset[str]
    #: its params name a thread (`threadId`): resolved before the handler runs
    names_thread: bool


class Dispatcher:
    def __init__(self, handlers: dict[str, Handler], resolve: Resolver | None = None) -> None:
        missing = set(METHODS) - set(handlers)
        if missing:
            raise RuntimeError(f"methods without a handler: {sorted(missing)}")
        self._resolve = resolve
        self._methods = {
            name: Bound(
                METHODS[name],
                handlers[name],
                frozenset((*METHODS[name].errors, *COMMON_ERRORS)),
                name in NAMED_THREAD_METHODS
                and "thread_id" in METHODS[name].params.__struct_fields__,
            )
            for name in METHODS
        }

    def parse(self, frame: bytes) -> tuple[list[jsonrpc.Parsed], bool, bool]:
        """(items, is_batch, blocking): blocking when any call may wait for long."""
        items, is_batch = jsonrpc.parse_frame(frame)
        blocking = False
        for item in items:
            if isinstance(item, jsonrpc.Call):
                bound = self._methods.get(item.method)
                blocking = blocking or (bound is not None and bound.spec.blocking)
        return items, is_batch, blocking

    async def handle_frame(self, session: Session, frame: bytes) -> bytes | None:
        """The reply payload for one frame, or None when nothing is to be sent."""
        items, is_batch, _ = self.parse(frame)
        return await self.handle_parsed(session, items, is_batch)

    async def handle_parsed(
        self, session: Session, items: list[jsonrpc.Parsed], is_batch: bool
    ) -> bytes | None:
        if not is_batch:
            return await self._handle_item(session, items[0])
        replies: list[bytes | None] = [None] * len(items)

        async def run(index: int, item: jsonrpc.Parsed) -> None:
            replies[index] = await self._handle_item(session, item)

        async with anyio.create_task_group() as tg:
            for index, item in enumerate(items):
                tg.start_soon(run, index, item)
        present = [reply for reply in replies if reply is not None]
        return jsonrpc.encode_batch(present) if present else None

    async def call(self, session: Session, method: str, params: dict[str, Any]) -> Any:
        """The typed result of one method, for a door that is not a socket (the web page):
        the params are validated as the socket's are, and a domain error is raised, not
        encoded. INVALID_ARGUMENT names the field msgspec refused."""
        bound = self._methods[method]
        try:
            typed = msgspec.convert(params, bound.spec.params)
        except msgspec.ValidationError as exc:
            raise InvalidArgument(f"Invalid params: {exc}", **(_invalid_field(exc) or {})) from exc
        return await self._run(bound, session, typed)

    async def _run(self, bound: Bound, session: Session, params: Any) -> Any:
        """The handler's result, its thread named by id first: a title, an id prefix or
        `@last` is resolved here, once for every method (docs/architecture.md)."""
        if bound.names_thread and self._resolve is not None:
            params = await self._resolve(session, params)
        return await bound.handler(session, params)

    async def _handle_item(self, session: Session, item: jsonrpc.Parsed) -> bytes | None:
        if isinstance(item, jsonrpc.ErrorReply):
            return jsonrpc.encode_error(item.id, item.code, item.message, item.data)
        reply = await self._call(session, item)
        return None if item.is_notification else reply

    async def _call(self, session: Session, call: jsonrpc.Call) -> bytes:
        bound = self._methods.get(call.method)
        if bound is None:
            return jsonrpc.encode_error(
                call.id, errors.METHOD_NOT_FOUND, f"Method not found: {call.method}"
            )
        if isinstance(call.params, list):
            return jsonrpc.encode_error(
                call.id, errors.INVALID_PARAMS, "Invalid params: alp methods take named params"
            )
        try:
            params = msgspec.convert(call.params or {}, bound.spec.params)
        except msgspec.ValidationError as exc:
            return jsonrpc.encode_error(
                call.id, errors.INVALID_PARAMS, f"Invalid params: {exc}", _invalid_field(exc)
            )
        try:
            result = await self._run(bound, session, params)
        except AlpError as exc:
            if exc.name not in bound.declared:
                # Sent all the same, but a client written from the document does not expect
                # it: add it to the method's MethodSpec.errors (tests fail on this line).
                log.error("undeclared_error", method=call.method, error=exc.name)
            data = {"name": exc.name, **exc.data}
            return jsonrpc.encode_error(call.id, exc.code, exc.message, data)
        except Exception:
            log.exception("handler_failed", method=call.method)
            return jsonrpc.encode_error(call.id, errors.INTERNAL_ERROR, "Internal error")
        return jsonrpc.encode_result(call.id, result)


def _invalid_field(exc: msgspec.ValidationError) -> dict[str, str] | None:
    """`{"field": "exitCode"}` for the param msgspec refused (`args[2]`, `origin.door` …)."""
    found = _AT_FIELD.search(str(exc))
    return {"field": found.group(1)} if found and found.group(1) else None
