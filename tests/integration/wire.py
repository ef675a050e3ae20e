"""A raw JSON-RPC connection for tests: bytes exactly as written, replies exactly as read.

`alpctl.client.Client` is the product's client and speaks only well-formed NDJSON; these
tests need to send garbage, half frames, oversized frames and LSP headers, and to see the
framing of what comes back, so they use this instead.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

#: Bytes that may appear in a traceback or a Python repr of one; none belongs on the wire.
TRACEBACK_MARKERS = ("Traceback", 'File "', '.py", line', "raise ", "Error(")


class Closed(Exception):
    """The daemon closed the connection (EOF or reset) before a whole frame arrived."""


class RawConnection:
    def __init__(self, socket_path: Path, timeout: float = 10.0) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(str(socket_path))
        self._buffer = b""

    def __enter__(self) -> RawConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.sock.close()

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def send_json(self, message: Any) -> None:
        self.send(json.dumps(message).encode() + b"\n")

    def send_content_length(self, body: bytes, header_name: str = "Content-Length") -> None:
        self.send(f"{header_name}: {len(body)}\r\n\r\n".encode() + body)

    def request(self, method: str, params: Any = None, id: Any = 1) -> dict[str, Any]:
        """One NDJSON request and its reply."""
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_json(message)
        reply = self.read_json()
        assert isinstance(reply, dict)
        return reply

    def _fill(self) -> None:
        try:
            chunk = self.sock.recv(65536)
        except ConnectionResetError as exc:
            raise Closed("connection reset") from exc
        if not chunk:
            raise Closed("end of stream")
        self._buffer += chunk

    def read_line(self) -> bytes:
        while b"\n" not in self._buffer:
            self._fill()
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def read_json(self) -> Any:
        """The next NDJSON reply, decoded."""
        return json.loads(self.read_line())

    def read_content_length(self) -> tuple[bytes, Any]:
        """The next LSP-framed reply: (its raw header block, its decoded body)."""
        while b"\r\n\r\n" not in self._buffer:
            self._fill()
        headers, _, self._buffer = self._buffer.partition(b"\r\n\r\n")
        length = None
        for line in headers.split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        assert length is not None, headers
        while len(self._buffer) < length:
            self._fill()
        body, self._buffer = self._buffer[:length], self._buffer[length:]
        return headers, json.loads(body)

    def read_until_closed(self, timeout: float = 10.0) -> bytes:
        """Everything left until the daemon closes; fails if it stays open past `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            self.sock.settimeout(max(deadline - time.monotonic(), 0.001))
            try:
                self._fill()
            except Closed:
                rest, self._buffer = self._buffer, b""
                return rest
            except TimeoutError:
                raise AssertionError(f"connection still open after {timeout} s") from None

    def assert_quiet(self, seconds: float) -> None:
        """Nothing arrives for `seconds` (a reply that must not exist did not come)."""
        self.sock.settimeout(seconds)
        try:
            chunk = self.sock.recv(65536)
        except TimeoutError:
            return
        finally:
            self.sock.settimeout(10.0)
        raise AssertionError(f"unexpected bytes: {(self._buffer + chunk)[:300]!r}")


def assert_no_traceback(reply: Any) -> None:
    text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
    for marker in TRACEBACK_MARKERS:
        assert marker not in text, f"{marker!r} leaked into a reply: {text[:500]}"


def error_of(reply: dict[str, Any]) -> dict[str, Any]:
    assert "result" not in reply, reply
    error = reply["error"]
    assert isinstance(error, dict)
    assert isinstance(error["code"], int)
    assert isinstance(error["message"], str)
    assert_no_traceback(reply)
    return error
