"""The floor for alpd's round trip: the smallest uvloop + msgspec JSON-RPC server.

`python -m bench.minimal_server SOCKET` serves `daemon/ping` (NDJSON) and prints "ready" once
it listens. No framing detection, no limits, no credentials, no logging: what is left is the
cost of the event loop, the socket and the codec.
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import msgspec
import uvloop


class Request(msgspec.Struct):
    jsonrpc: str
    method: str
    id: int | str | None = None
    params: dict[str, Any] | list[Any] | None = None


class Response(msgspec.Struct):
    jsonrpc: str
    id: int | str | None
    result: Any


DECODE = msgspec.json.Decoder(Request).decode
ENCODE = msgspec.json.Encoder().encode
PONG = {"version": "minimal", "protocol": 1, "pid": os.getpid()}


class JsonRpcLines(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport: Any = transport  # uvloop's transports are not asyncio.Transport
        self.pending = b""

    def data_received(self, data: bytes) -> None:
        *lines, self.pending = (self.pending + data).split(b"\n")
        replies = [
            ENCODE(Response("2.0", request.id, PONG)) + b"\n"
            for request in map(DECODE, filter(None, lines))
            if request.method == "daemon/ping"
        ]
        self.transport.write(b"".join(replies))


async def serve(path: str) -> None:
    server = await asyncio.get_running_loop().create_unix_server(JsonRpcLines, path)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    uvloop.run(serve(sys.argv[1]))
