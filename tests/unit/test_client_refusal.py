"""The thin client reports a refusal that closed the connection before its request went out."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from alpctl.client import Client, DaemonUnreachable, RpcError

REFUSAL = (
    b'{"jsonrpc":"2.0","id":null,"error":{"code":2003,"message":"768 connections",'
    b'"data":{"name":"TOO_MANY_CONNECTIONS"}}}\n'
)


def test_a_refusal_sent_before_the_request_is_the_error_of_the_call() -> None:
    ours, daemon = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    daemon.sendall(REFUSAL)
    daemon.close()  # closed at once: our request will meet EPIPE
    client = Client(Path("/nonexistent.sock"), ours)
    with pytest.raises(RpcError) as refused:
        for _ in range(3):  # the first send may still fit in the buffer before EPIPE shows
            client.call("daemon/ping")
    assert refused.value.name == "TOO_MANY_CONNECTIONS"
    ours.close()


def test_a_connection_closed_without_a_word_is_unreachable() -> None:
    ours, daemon = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    daemon.close()
    client = Client(Path("/nonexistent.sock"), ours)
    with pytest.raises(DaemonUnreachable):
        client.call("daemon/ping")
    ours.close()
