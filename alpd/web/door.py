"""The page's way into the daemon: the socket's own handlers, called as the daemon's owner.

There is no second path to the services: every page and action names a method of the wire
contract and goes through `Dispatcher.call`, so it gets the same params validation, the same
ownership checks and the same named errors as `alp` on the socket. The page acts for the
uid the daemon runs as: only that user can read the token file that lets a browser in.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from alpd.rpc.dispatch import Dispatcher
from alpd.services.context import Caller


@dataclass(slots=True)
class OwnerSession:
    """A Session (alpd.rpc.dispatch) for the page: it cannot subscribe, it streams events
    through alpd.web.stream instead."""

    caller: Caller
    #: what the daemon writes into `origin.door` for a run the page starts
    door: str = "web"

    def subscribe(self, methods: frozenset[str] | None, thread_id: str | None) -> None:
        raise NotImplementedError("the web page streams events through /events")


class Door:
    def __init__(self, dispatcher: Dispatcher, uid: int) -> None:
        self._dispatcher = dispatcher
        self.session = OwnerSession(Caller(uid=uid, gid=os.getgid(), pid=os.getpid()))

    async def call(self, method: str, **params: Any) -> Any:
        """The result of `method` (params by their Python names: `thread_id=`); a domain
        error (AlpError) is raised for the page to show."""
        wire = {_camel(name): value for name, value in params.items()}
        return await self._dispatcher.call(self.session, method, wire)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)
