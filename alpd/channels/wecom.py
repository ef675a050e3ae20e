"""WeChat through WeCom (企业微信) application messages: the message API out, the callback in.

Personal WeChat reaches a WeCom app through WeCom's WeChat plug-in (微信插件); docs/channels.md
takes a person from nothing to a working app.

Out: `GET /cgi-bin/gettoken?corpid&corpsecret` gives an access token, kept until a little
before its `expires_in` (and fetched again at once when WeCom says it expired: errcode 40014,
42001); `POST /cgi-bin/message/send` sends text (cut to WeCom's 2,048 bytes a message) or,
with buttons, a template card of kind `button_interaction` whose buttons carry their data as
the button key. A pressed button comes back as a `template_card_event` with that key and a
one-time `ResponseCode`, with which `acknowledge` replaces the card's buttons by the answer
(`/cgi-bin/message/update_template_card`); WeCom cannot edit a sent message, so `edit` adds
nothing after that.

In: alpd serves `GET|POST /wecom` on `listen` (uvicorn inside alpd's loop, as the web page
is), meant to sit behind the person's own HTTPS reverse proxy or tunnel, whose public URL is
the app's callback URL. The GET is WeCom's URL check (its `echostr`, decrypted, is the
answer); a POST carries one message. Both are checked in this order
(`alpd.channels.wecom_crypto`): the signature, the replay window (timestamp ± 300 s, each
nonce once), the AES envelope and its receive id (our corp id), then the agent id. Anything
refused is answered 403 and logged with its reason, at most once a minute. Accepted messages
from senders `screen` does not admit are dropped there (no queue, no write); the rest go,
in order, through a bounded queue to `received`; a message id seen in the last
`SEEN_MESSAGES` is not handled again (WeCom retries a callback that took over 5 s). The
nonces and message ids are also kept in the database (`alpd.services.channels.seen`), so a
replay or a retry right after a restart is refused too.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import time
import xml.etree.ElementTree as ET
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any, Final

import anyio
import httpx
import structlog
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from alpd.channels.door import (
    Button,
    ChannelBroken,
    ChannelDown,
    Incoming,
    Received,
    Screen,
    Sent,
    Up,
)
from alpd.channels.secrets_file import read_secret
from alpd.channels.wecom_crypto import Refused, ReplayGuard, WecomCrypto
from alpd.domain.channel_settings import WechatSettings
from alpd.services.channels.seen import MESSAGE_SECONDS, SeenKeys

#: WeCom's limit for a text message is 2,048 bytes; `send` cuts by bytes, this by characters
TEXT_LIMIT: Final = 2000
MAX_TEXT_BYTES: Final = 2048
#: a callback's body at most (a message is a few hundred bytes)
MAX_BODY: Final = 64 * 1024
#: messages accepted but not yet handled; more is answered 503 (WeCom retries)
QUEUE: Final = 256
SEEN_MESSAGES: Final = 1024
#: seconds before its expiry that a cached access token is fetched again
TOKEN_MARGIN: Final = 300
#: WeCom's errcodes for an access token that is invalid or expired
TOKEN_EXPIRED: Final = frozenset({40014, 42001})
#: WeCom's errcodes for a wrong corp id or secret
BAD_CREDENTIALS: Final = frozenset({40001, 40013, 40056, 40091, 41002, 41004, 60020})
REFUSED_LOG_SECONDS: Final = 60.0
PATH: Final = "/wecom"

log = structlog.get_logger("alpd.channels.wecom")

for _noisy in ("httpx", "httpcore"):
    # httpx logs each request's URL at INFO, and gettoken's URL holds the app's secret.
    logging.getLogger(_noisy).setLevel(logging.WARNING)


class _EmbeddedServer(uvicorn.Server):
    """uvicorn without its signal handlers: the channel's task is cancelled to stop it."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WecomChannel:
    name = "wechat"
    text_limit = TEXT_LIMIT

    def __init__(self, settings: WechatSettings, seen: SeenKeys | None = None) -> None:
        self.settings = settings
        #: the nonces and message ids seen, kept across restarts (None: in memory only)
        self.seen = seen
        self._secret = read_secret(settings.secret_file, "ALP_WECOM_SECRET")
        token = read_secret(settings.token_file, "ALP_WECOM_TOKEN")
        try:
            self.crypto = WecomCrypto(
                token, read_secret(settings.aes_key_file, "ALP_WECOM_AES_KEY"), settings.corp_id
            )
        except ValueError as exc:
            raise ChannelBroken(f"{settings.aes_key_file}: {exc}") from None
        self.replay = ReplayGuard()
        self._http = httpx.AsyncClient(base_url=settings.api_url, timeout=15.0)
        self._access: tuple[str, float] | None = None
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._tasks = 0
        self._last_refused_log = 0.0
        self.refused = 0
        self._send, self._receive = anyio.create_memory_object_stream[Incoming](QUEUE)
        self._screen: Screen = lambda incoming: False

    def scrub(self, text: str) -> str:
        text = text.replace(self._secret, "<secret>")
        if self._access is not None:
            text = text.replace(self._access[0], "<token>")
        return text

    # receiving

    async def run(self, screen: Screen, received: Received, up: Up) -> None:
        self._screen = screen
        await self._token()
        sock = _listen(self.settings.listen)
        config = uvicorn.Config(
            self.app(),
            log_config=None,
            log_level="warning",
            access_log=False,
            lifespan="off",
            proxy_headers=False,
            server_header=False,
            limit_concurrency=64,
            timeout_keep_alive=5,
            h11_max_incomplete_event_size=16 * 1024,
            timeout_graceful_shutdown=1,
        )
        server = _EmbeddedServer(config)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_serve, server, sock)
            up("serving", f"callback on http://{self.settings.listen}{PATH}")
            log.info("wecom_serving", listen=self.settings.listen)
            async for incoming in self._receive:
                await received(incoming)

    def app(self) -> Starlette:
        return Starlette(routes=[Route(PATH, self._callback, methods=["GET", "POST"])])

    async def _callback(self, request: Request) -> Response:
        query = request.query_params
        signature = query.get("msg_signature", "")
        timestamp, nonce = query.get("timestamp", ""), query.get("nonce", "")
        try:
            if request.method == "GET":
                echo = query.get("echostr", "")
                await self._check(signature, timestamp, nonce, echo)
                return PlainTextResponse(self.crypto.decrypt(echo))
            body = await _body(request)
            encrypt = _field(_xml(body), "Encrypt")
            await self._check(signature, timestamp, nonce, encrypt)
            message = _xml(self.crypto.decrypt(encrypt).encode())
        except Refused as exc:
            self._refused(request, str(exc))
            return PlainTextResponse("refused", status_code=403)
        incoming = await self._incoming(message)
        if incoming is not None and self._screen(incoming):
            try:
                self._send.send_nowait(incoming)
            except anyio.WouldBlock:
                return PlainTextResponse("busy", status_code=503)
        return PlainTextResponse("")

    async def _check(self, signature: str, timestamp: str, nonce: str, encrypt: str) -> None:
        if not encrypt:
            raise Refused("no ciphertext")
        self.crypto.verify(signature, timestamp, nonce, encrypt)
        self.replay.check(timestamp, nonce, time.time())
        # the window's nonces kept across a restart too: a replay right after one is refused
        if self.seen is not None and not await self.seen.first_time(
            f"n:{nonce}", 2 * self.replay.window
        ):
            raise Refused("the nonce was seen before (a replay)")

    def _refused(self, request: Request, reason: str) -> None:
        self.refused += 1
        now = time.monotonic()
        if now - self._last_refused_log >= REFUSED_LOG_SECONDS:
            self._last_refused_log = now
            client = request.client.host if request.client else None
            log.warning("wecom_callback_refused", reason=reason, client=client,
                        refused_so_far=self.refused)  # fmt: skip

    async def _incoming(self, message: ET.Element) -> Incoming | None:
        """A person's text or button press for our app; None for anything else."""
        agent = message.findtext("AgentID")
        if agent is not None and agent.strip() != str(self.settings.agent_id):
            return None
        sender = (message.findtext("FromUserName") or "").strip()
        if not sender:
            return None
        kind = message.findtext("MsgType")
        if kind == "text":
            key = message.findtext("MsgId") or ""
            if key and await self._seen_before(f"m:{key}"):
                return None
            return Incoming(sender=sender, chat=sender, text=message.findtext("Content") or "")
        if kind == "event" and message.findtext("Event") == "template_card_event":
            code = message.findtext("ResponseCode") or ""
            if code and await self._seen_before(f"r:{code}"):
                return None
            return Incoming(
                sender=sender,
                chat=sender,
                button=message.findtext("EventKey") or "",
                button_ref=code or None,
            )
        return None

    async def _seen_before(self, key: str) -> bool:
        if key in self._seen:
            return True
        self._seen[key] = None
        while len(self._seen) > SEEN_MESSAGES:
            self._seen.popitem(last=False)
        # … and across a restart (alpd.services.channels.seen)
        return self.seen is not None and not await self.seen.first_time(key, MESSAGE_SECONDS)

    # sending

    async def _token(self, fresh: bool = False) -> str:
        if not fresh and self._access is not None and time.monotonic() < self._access[1]:
            return self._access[0]
        params = {"corpid": self.settings.corp_id, "corpsecret": self._secret}
        answer = await self._request("GET", "/cgi-bin/gettoken", params=params)
        code = answer.get("errcode", 0)
        if code in BAD_CREDENTIALS:
            raise ChannelBroken(
                f"WeCom refused the corp id or the app's secret (errcode {code}: "
                f"{self.scrub(str(answer.get('errmsg')))})"
            )
        if code or not answer.get("access_token"):
            raise ChannelDown(f"gettoken: errcode {code}: {self.scrub(str(answer.get('errmsg')))}")
        expires = float(answer.get("expires_in") or 7200)
        self._access = (str(answer["access_token"]), time.monotonic() + expires - TOKEN_MARGIN)
        return self._access[0]

    async def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = await self._http.request(method, path, **kwargs)
            response.raise_for_status()
            answer = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ChannelDown(self.scrub(f"{type(exc).__name__}: {exc}")) from None
        if not isinstance(answer, dict):
            raise ChannelDown(f"{path}: not a JSON object")
        return answer

    async def _call(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        """POST to the message API with the access token (fetched again once if expired)."""
        for fresh in (False, True):
            token = await self._token(fresh)
            answer = await self._request("POST", path, params={"access_token": token}, json=body)
            code = answer.get("errcode", 0)
            if code in TOKEN_EXPIRED and not fresh:
                continue
            if code:
                why = self.scrub(str(answer.get("errmsg")))
                raise ChannelDown(f"{path}: errcode {code}: {why}")
            return answer
        raise AssertionError("unreachable")

    async def send(self, chat: str, text: str, buttons: Sequence[Button] = ()) -> Sent:
        sent = ""
        for part in _byte_parts(text, MAX_TEXT_BYTES):
            answer = await self._call("/cgi-bin/message/send", {
                "touser": chat, "msgtype": "text", "agentid": self.settings.agent_id,
                "text": {"content": part},
            })  # fmt: skip
            sent = str(answer.get("msgid", ""))
        if buttons:
            self._tasks += 1
            title = (text.strip().splitlines() or ["alp"])[0]
            card = {
                "card_type": "button_interaction",
                "main_title": {"title": title[:26]},
                "task_id": f"alp-{int(time.time() * 1000)}-{self._tasks}",
                "button_list": [
                    {"text": b.label[:10], "style": 1 if i == 0 else 2, "key": b.data}
                    for i, b in enumerate(buttons[:6])
                ],
            }
            answer = await self._call("/cgi-bin/message/send", {
                "touser": chat, "msgtype": "template_card", "agentid": self.settings.agent_id,
                "template_card": card,
            })  # fmt: skip
            sent = str(answer.get("msgid", ""))
        return Sent(chat, sent)

    async def edit(self, sent: Sent, text: str) -> None:
        """WeCom cannot edit a sent message; `acknowledge` already replaced the buttons."""

    async def acknowledge(self, incoming: Incoming, text: str) -> None:
        if incoming.button_ref is None:
            return
        try:
            await self._call("/cgi-bin/message/update_template_card", {
                "userids": [incoming.sender], "agentid": self.settings.agent_id,
                "response_code": incoming.button_ref, "button": {"replace_name": text[:20]},
            })  # fmt: skip
        except ChannelDown as exc:
            log.warning("wecom_ack_failed", error=str(exc))

    async def close(self) -> None:
        await self._http.aclose()


def _byte_parts(text: str, most: int) -> list[str]:
    """`text` in pieces of at most `most` UTF-8 bytes, never splitting a character."""
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for char in text:
        width = len(char.encode())
        if size + width > most:
            parts.append("".join(current))
            current, size = [], 0
        current.append(char)
        size += width
    parts.append("".join(current))
    return parts


async def _body(request: Request) -> bytes:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY:
            raise Refused(f"a body over {MAX_BODY} bytes")
    return body


def _xml(data: bytes) -> ET.Element:
    try:
        return ET.fromstring(data)
    except ET.ParseError:
        raise Refused("the body is not XML") from None


def _field(element: ET.Element, name: str) -> str:
    return (element.findtext(name) or "").strip()


def _listen(address: str) -> socket.socket:
    host, _, port = address.rpartition(":")
    host = host.strip("[]")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, int(port)))
        sock.listen(64)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise ChannelBroken(f"cannot listen on {address}: {exc.strerror}") from None
    return sock


async def _serve(server: uvicorn.Server, sock: socket.socket) -> None:
    try:
        await server.serve(sockets=[sock])
    finally:
        for listener in getattr(server, "servers", ()):
            listener.close()
        sock.close()


__all__ = ["PATH", "TEXT_LIMIT", "WecomChannel"]
