"""A fake Telegram Bot API on 127.0.0.1 for the channel tests: the methods alp's Telegram
channel calls (getMe, deleteWebhook, getUpdates with long polling, sendMessage,
editMessageText, answerCallbackQuery), with a queue of updates the test writes and a record
of everything the bot sent.

`getUpdates(offset)` confirms every update below `offset` (they are dropped, as Telegram
does) and returns those at or above it, waiting up to `timeout` seconds for one. Every
offset asked for is kept in `offsets`; `conflict = True` answers 409 as Telegram does when
another poller holds the bot.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

BOT = {"id": 777, "is_bot": True, "first_name": "alp", "username": "alp_test_bot"}


class FakeBotApi:
    def __init__(self, token: str) -> None:
        self.token = token
        self.updates: list[dict[str, Any]] = []
        self.next_update = 1
        self.sent: list[dict[str, Any]] = []
        self.edits: list[dict[str, Any]] = []
        self.answers: list[dict[str, Any]] = []
        self.offsets: list[int | None] = []
        #: time.monotonic() of each update's getUpdates hand-out, by update_id
        self.handed_at: dict[int, float] = {}
        self.conflict = False
        self.calls: list[str] = []
        self._cond = threading.Condition()
        self._message_id = 100
        self.url = ""

    # what a test does

    def user_says(self, user: int, text: str, name: str = "Ann") -> int:
        return self._push({"message": {
            "message_id": self._next_message(), "date": int(time.time()),
            "chat": {"id": user, "type": "private"},
            "from": {"id": user, "is_bot": False, "first_name": name}, "text": text,
        }})  # fmt: skip

    def press(self, user: int, data: str, message_id: int) -> int:
        return self._push({"callback_query": {
            "id": f"cb{self.next_update}", "chat_instance": "ci", "data": data,
            "from": {"id": user, "is_bot": False, "first_name": "Ann"},
            "message": {"message_id": message_id, "date": int(time.time()),
                        "chat": {"id": user, "type": "private"}, "text": "?"},
        }})  # fmt: skip

    def wait_sent(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 30.0, start: int = 0
    ) -> dict[str, Any]:
        """The first message sent (from the `start`-th on) that `match`es, waiting for it."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for item in self.sent[start:]:
                    if match(item):
                        return item
                left = deadline - time.monotonic()
                assert left > 0, f"nothing matching was sent; sent: {self.texts()}"
                self._cond.wait(left)

    def texts(self, chat: int | None = None) -> list[str]:
        with self._cond:
            return [str(s["text"]) for s in self.sent if chat is None or s["chat_id"] == chat]

    def pending(self) -> int:
        with self._cond:
            return len(self.updates)

    # the server side

    def _next_message(self) -> int:
        self._message_id += 1
        return self._message_id

    def _push(self, body: dict[str, Any]) -> int:
        with self._cond:
            update_id = self.next_update
            self.next_update += 1
            self.updates.append({"update_id": update_id, **body})
            self._cond.notify_all()
            return update_id

    def handle(self, method: str, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        self.calls.append(method)
        if method == "getMe":
            return 200, {"ok": True, "result": BOT}
        if method in ("deleteWebhook", "answerCallbackQuery", "close", "logOut"):
            if method == "answerCallbackQuery":
                self.answers.append(params)
            return 200, {"ok": True, "result": True}
        if method == "getUpdates":
            return self._get_updates(params)
        if method == "sendMessage":
            with self._cond:
                message_id = self._next_message()
                self.sent.append({**params, "chat_id": int(params["chat_id"]),
                                  "message_id": message_id, "at": time.monotonic()})  # fmt: skip
                self._cond.notify_all()
            return 200, {"ok": True, "result": self._message(params, message_id)}
        if method == "editMessageText":
            with self._cond:
                self.edits.append(params)
                self._cond.notify_all()
            return 200, {"ok": True, "result": self._message(params, int(params["message_id"]))}
        return 404, {"ok": False, "error_code": 404, "description": "Not Found"}

    def _message(self, params: dict[str, Any], message_id: int) -> dict[str, Any]:
        return {"message_id": message_id, "date": int(time.time()), "from": BOT,
                "chat": {"id": int(params["chat_id"]), "type": "private"},
                "text": params.get("text", "")}  # fmt: skip

    def _get_updates(self, params: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        if self.conflict:
            return 409, {"ok": False, "error_code": 409, "description":
                         "Conflict: terminated by other getUpdates request"}  # fmt: skip
        offset = int(params["offset"]) if params.get("offset") is not None else None
        timeout = float(params.get("timeout") or 0)
        limit = int(params.get("limit") or 100)
        deadline = time.monotonic() + min(timeout, 2.0)
        with self._cond:
            self.offsets.append(offset)
            if offset is not None:
                self.updates = [u for u in self.updates if u["update_id"] >= offset]
            while not self.updates and time.monotonic() < deadline:
                self._cond.wait(deadline - time.monotonic())
            batch = self.updates[:limit]
            now = time.monotonic()
            for update in batch:
                self.handed_at.setdefault(update["update_id"], now)
            return 200, {"ok": True, "result": batch}


def _params(handler: BaseHTTPRequestHandler) -> dict[str, Any]:
    length = int(handler.headers.get("Content-Length") or 0)
    raw = handler.rfile.read(length) if length else b""
    kind = handler.headers.get("Content-Type") or ""
    if "json" in kind:
        return dict(json.loads(raw or b"{}"))
    params: dict[str, Any] = {}
    for key, values in parse_qs(raw.decode()).items():
        value = values[0]
        try:
            params[key] = json.loads(value)
        except ValueError:
            params[key] = value
    return params


@contextmanager
def fake_bot_api(token: str) -> Iterator[FakeBotApi]:
    api = FakeBotApi(token)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            prefix = f"/bot{api.token}/"
            if not self.path.startswith(prefix):
                status, body = 401, {"ok": False, "error_code": 401, "description": "Unauthorized"}
            else:
                status, body = api.handle(self.path[len(prefix) :], _params(self))
            data = json.dumps(body).encode()
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the poll was cancelled (alpd stopping): nobody reads the answer

        do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    api.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()
