"""A blocking JSON-RPC client over the daemon's Unix socket. Stdlib only (plus the stdlib-only
parts of `protocol`: errors, paths, peer credentials), because every CLI call pays for what it
imports: a stdlib client starts in about 26 ms here, `import msgspec` alone costs 27.

It checks the daemon's uid before sending anything, so a socket squatted by another user
is refused (bitcoind's documented port-squatting risk; getpeereid works both ways).
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Iterator

from protocol.peercred import PeerCredentialsUnavailable, read_peer_credentials

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class DaemonUnreachable(Exception):
    """No daemon answers on the socket (and none could be started)."""

    def __init__(self, socket_path: str, reason: str) -> None:
        super().__init__(reason)
        self.socket_path = socket_path
        self.reason = reason


class ForeignDaemon(Exception):
    """The socket is served by another user: never talk to it."""


class RpcError(Exception):
    """An error reply; `name` is the symbolic name of the wire contract when there is one."""

    def __init__(self, code: int, message: str, data: Any) -> None:
        # The error table is read only when an error comes back, not on every call.
        from protocol.errors import CODE_TO_NAME

        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data if isinstance(data, dict) else {}
        self.name = self.data.get("name") or CODE_TO_NAME.get(code) or f"JSONRPC_{code}"


class Client:
    def __init__(self, socket_path: str, sock: socket.socket) -> None:
        self.socket_path = socket_path
        self._sock = sock
        self._reader = sock.makefile("rb")
        self._next_id = 1

    @classmethod
    def connect(cls, path: str | os.PathLike[str], timeout: float | None = None) -> Client:
        """A connection to the daemon on `path`; with `timeout`, every read and write on it
        gives up after that many seconds (DaemonUnreachable) instead of waiting for ever."""
        socket_path = os.fspath(path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(socket_path)
        except OSError as exc:
            sock.close()
            raise DaemonUnreachable(socket_path, exc.strerror or str(exc)) from exc
        try:
            server = read_peer_credentials(sock)
        except PeerCredentialsUnavailable as exc:
            sock.close()
            raise ForeignDaemon(f"cannot verify who serves {socket_path}") from exc
        if server.uid != os.getuid():
            sock.close()
            raise ForeignDaemon(
                f"{socket_path} is served by uid {server.uid}, not you (uid {os.getuid()}); "
                "refusing to talk to it"
            )
        return cls(socket_path, sock)

    def close(self) -> None:
        # Shut the socket down first: a thread blocked reading it (a notification listener)
        # then sees the end and lets go of the reader, whose close would otherwise wait for
        # that read for ever (and a blocked close is beyond even a signal's reach).
        try:  # noqa: SIM105 (contextlib is one import more for every CLI call)
            self._sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass  # not connected any more
        self._reader.close()
        self._sock.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(self, method: str, params: dict[str, Any] | None = None) -> Any:
        request_id = self._next_id
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params or {}}
        self._send(message)
        while True:
            reply = self._receive()
            if "method" in reply:  # a notification that raced the reply
                continue
            if "error" in reply:
                error = reply["error"]
                raise RpcError(error.get("code", 0), error.get("message", ""), error.get("data"))
            return reply.get("result")

    def notifications(self) -> Iterator[dict[str, Any]]:
        while True:
            reply = self._receive()
            if "method" in reply:
                yield reply

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"
        try:
            self._sock.sendall(data)
        except OSError as exc:
            # A refused connection (another uid, too many connections) is told why and closed
            # at once, maybe before our request went out: the reason is waiting to be read.
            error = self._refusal()
            if error is not None:
                raise RpcError(
                    error.get("code", 0), error.get("message", ""), error.get("data")
                ) from exc
            raise DaemonUnreachable(self.socket_path, f"connection lost: {exc}") from exc

    def _refusal(self) -> dict[str, Any] | None:
        try:
            reply = json.loads(self._reader.readline())
        except (OSError, ValueError):
            return None
        error = reply.get("error") if isinstance(reply, dict) else None
        return error if isinstance(error, dict) else None

    def _receive(self) -> dict[str, Any]:
        try:
            line = self._reader.readline()
        except OSError as exc:
            raise DaemonUnreachable(self.socket_path, f"connection lost: {exc}") from exc
        if not line:
            raise DaemonUnreachable(self.socket_path, "the daemon closed the connection")
        reply: dict[str, Any] = json.loads(line)
        return reply


def start_daemon(home: str | None, socket_path: str, timeout: float = 10.0) -> int:
    """Start alpd in the background on the same home and socket; return its pid once it answers.

    Its output goes to `HOME/alpd.log`; it runs in its own session so closing this terminal
    does not end it (as gpg starts gpg-agent).
    """
    import subprocess  # only on this rare path: it costs every other call ~2.5 ms

    command = [sys.executable, "-m", "alpd", "--socket", socket_path]
    log_dir = home or os.path.expanduser(os.environ.get("ALP_HOME") or "~/.alp")
    if home is not None:
        command += ["--home", home]
    os.makedirs(log_dir, mode=0o700, exist_ok=True)
    log = os.path.join(log_dir, "alpd.log")
    log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=log_fd,
            stderr=log_fd,
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(log_fd)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise DaemonUnreachable(
                socket_path,
                f"alpd exited with status {process.returncode}; see {log}",
            )
        try:
            Client.connect(socket_path).close()
            return process.pid
        except DaemonUnreachable:
            time.sleep(0.02)
    raise DaemonUnreachable(socket_path, f"alpd did not answer within {timeout:.0f} s")
