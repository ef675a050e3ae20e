"""A fake WeCom (企业微信) on 127.0.0.1 for the channel tests, both ways.

The message API alp calls: `GET /cgi-bin/gettoken` (a corp id and secret give an access
token; `expires_in` settable; a wrong secret is errcode 40001), `POST /cgi-bin/message/send`
and `/cgi-bin/message/update_template_card` (recorded; an access token not issued, or
expired with `expire_tokens()`, is errcode 42001).

And WeCom calling alp's callback (`Callback`): the URL check (GET with `echostr`) and
messages (POST), encrypted as WeCom's spec says, written here from the spec and not with
alp's own code (`alpd.channels.wecom_crypto`), so the two check each other; each part can
be spoiled (signature, timestamp, nonce, receive id) to see it refused.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import secrets
import struct
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

CORP_ID = "ww-test-corp"
AGENT_ID = 1000002
SECRET = "app-secret-" + "s" * 32
CALLBACK_TOKEN = "callbacktoken"
#: 43 characters of base64 (WeCom's EncodingAESKey)
AES_KEY = base64.b64encode(bytes(range(32))).decode().rstrip("=")


class FakeWecom:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []
        self.updates: list[dict[str, Any]] = []
        self.token_calls = 0
        self.expires_in = 7200
        self._tokens: set[str] = set()
        self._cond = threading.Condition()
        self._msgid = 0
        self.url = ""

    def expire_tokens(self) -> None:
        with self._cond:
            self._tokens.clear()

    def wait_sent(
        self, match: Callable[[dict[str, Any]], bool], timeout: float = 30.0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for item in self.sent:
                    if match(item):
                        return item
                left = deadline - time.monotonic()
                assert left > 0, f"nothing matching was sent; sent: {self.texts()}"
                self._cond.wait(left)

    def texts(self, user: str | None = None) -> list[str]:
        with self._cond:
            return [text_of(s) for s in self.sent if user is None or s["touser"] == user]

    def handle(self, method: str, path: str, query: dict[str, str], body: bytes) -> dict[str, Any]:
        if path == "/cgi-bin/gettoken":
            with self._cond:
                self.token_calls += 1
                if query.get("corpid") != CORP_ID or query.get("corpsecret") != SECRET:
                    return {"errcode": 40001, "errmsg": "invalid credential"}
                token = secrets.token_hex(8)
                self._tokens.add(token)
            return {"errcode": 0, "errmsg": "ok", "access_token": token,
                    "expires_in": self.expires_in}  # fmt: skip
        with self._cond:
            if query.get("access_token") not in self._tokens:
                return {"errcode": 42001, "errmsg": "access_token expired"}
            payload = json.loads(body or b"{}")
            if path == "/cgi-bin/message/send":
                self._msgid += 1
                self.sent.append({**payload, "msgid": f"msg{self._msgid}", "at": time.monotonic()})
                self._cond.notify_all()
                return {"errcode": 0, "errmsg": "ok", "msgid": f"msg{self._msgid}"}
            if path == "/cgi-bin/message/update_template_card":
                self.updates.append(payload)
                self._cond.notify_all()
                return {"errcode": 0, "errmsg": "ok"}
        return {"errcode": 404, "errmsg": "no such api"}


def text_of(sent: dict[str, Any]) -> str:
    if sent.get("msgtype") == "text":
        return str(sent["text"]["content"])
    return json.dumps(sent.get("template_card"), ensure_ascii=False)


def card_keys(sent: dict[str, Any]) -> dict[str, str]:
    return {b["text"]: b["key"] for b in sent["template_card"]["button_list"]}


@contextmanager
def fake_wecom() -> Iterator[FakeWecom]:
    api = FakeWecom()

    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            url = urllib.parse.urlsplit(self.path)
            query = dict(urllib.parse.parse_qsl(url.query))
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            data = json.dumps(api.handle(self.command, url.path, query, body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        do_GET = do_POST = _answer

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


# WeCom calling alp


def encrypt(message: str, receive_id: str = CORP_ID, key_text: str = AES_KEY) -> str:
    key = base64.b64decode(key_text + "=")
    body = message.encode()
    plain = os.urandom(16) + struct.pack("!I", len(body)) + body + receive_id.encode()
    pad = 32 - len(plain) % 32
    plain += bytes([pad]) * pad
    encryptor = Cipher(algorithms.AES(key), modes.CBC(key[:16])).encryptor()
    return base64.b64encode(encryptor.update(plain) + encryptor.finalize()).decode()


def sign(timestamp: str, nonce: str, encrypted: str, token: str = CALLBACK_TOKEN) -> str:
    return hashlib.sha1("".join(sorted([token, timestamp, nonce, encrypted])).encode()).hexdigest()


def text_xml(user: str, text: str, msg_id: int) -> str:
    return (
        f"<xml><ToUserName><![CDATA[{CORP_ID}]]></ToUserName>"
        f"<FromUserName><![CDATA[{user}]]></FromUserName><CreateTime>{int(time.time())}"
        f"</CreateTime><MsgType><![CDATA[text]]></MsgType><Content><![CDATA[{text}]]></Content>"
        f"<MsgId>{msg_id}</MsgId><AgentID>{AGENT_ID}</AgentID></xml>"
    )


def card_event_xml(user: str, key: str, response_code: str) -> str:
    return (
        f"<xml><ToUserName><![CDATA[{CORP_ID}]]></ToUserName>"
        f"<FromUserName><![CDATA[{user}]]></FromUserName><CreateTime>{int(time.time())}"
        "</CreateTime><MsgType><![CDATA[event]]></MsgType>"
        "<Event><![CDATA[template_card_event]]></Event>"
        f"<EventKey><![CDATA[{key}]]></EventKey><TaskId><![CDATA[t1]]></TaskId>"
        "<CardType><![CDATA[button_interaction]]></CardType>"
        f"<ResponseCode><![CDATA[{response_code}]]></ResponseCode>"
        f"<AgentID>{AGENT_ID}</AgentID></xml>"
    )


class Callback:
    """WeCom's side of alp's callback URL."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.msg_id = 1000

    def request(
        self,
        method: str,
        inner: str,
        *,
        timestamp: int | None = None,
        nonce: str | None = None,
        receive_id: str = CORP_ID,
        bad_signature: bool = False,
    ) -> tuple[int, str]:
        encrypted = encrypt(inner, receive_id)
        stamp = str(int(time.time()) if timestamp is None else timestamp)
        nonce = nonce or secrets.token_hex(6)
        signature = sign(stamp, nonce, encrypted)
        if bad_signature:
            signature = sign(stamp, nonce, encrypted, token="not-the-token")
        query = {"msg_signature": signature, "timestamp": stamp, "nonce": nonce}
        data = None
        if method == "GET":
            query["echostr"] = encrypted
        else:
            data = (
                f"<xml><ToUserName><![CDATA[{CORP_ID}]]></ToUserName>"
                f"<AgentID><![CDATA[{AGENT_ID}]]></AgentID>"
                f"<Encrypt><![CDATA[{encrypted}]]></Encrypt></xml>"
            ).encode()
        request = urllib.request.Request(
            f"{self.url}?{urllib.parse.urlencode(query)}", data=data, method=method
        )
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read().decode()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read().decode()

    def says(self, user: str, text: str, **spoil: Any) -> tuple[int, str]:
        self.msg_id += 1
        return self.request("POST", text_xml(user, text, self.msg_id), **spoil)

    def presses(self, user: str, key: str) -> tuple[int, str]:
        return self.request("POST", card_event_xml(user, key, secrets.token_hex(8)))
