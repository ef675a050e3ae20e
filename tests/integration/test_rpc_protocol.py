"""The wire protocol of a real alpd (docs/contract.md): framings, JSON-RPC 2.0 rules, bounds.

Every test talks to a real daemon process over its Unix socket with raw bytes.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from typing import Any

import pytest
from wire import RawConnection, assert_no_traceback, error_of

from alpd.rpc.connection import DEADLINE_SPREAD
from alpd.testing.daemon import DaemonProcess
from protocol import errors
from protocol.framing import HEAD_BYTES

PING = {"jsonrpc": "2.0", "id": 1, "method": "daemon/ping"}
MIB = 1024 * 1024
FRAME_DEADLINE = 10.0  # ConnectionLimits.frame_deadline; alpd has no knob to shorten it


def ping_body(id: Any = 1) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": id, "method": "daemon/ping"}).encode()


def assert_pong(reply: dict[str, Any], daemon: DaemonProcess, id: Any = 1) -> None:
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == id
    assert "error" not in reply, reply
    assert reply["result"]["pid"] == daemon.pid
    assert reply["result"]["protocol"] == 1


def test_ndjson_request_gets_an_ndjson_reply(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send(ping_body(1) + b"\n" + ping_body(2) + b"\r\n")
        assert_pong(conn.read_json(), alpd, 1)
        assert_pong(conn.read_json(), alpd, 2)


@pytest.mark.parametrize("header", ["Content-Length", "content-length", "CONTENT-LENGTH"])
def test_content_length_request_gets_a_content_length_reply(
    alpd: DaemonProcess, header: str
) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send_content_length(ping_body(7), header_name=header)
        headers, reply = conn.read_content_length()
        assert headers.lower().startswith(b"content-length:")
        assert_pong(reply, alpd, 7)
        # Extra headers (as vscode-jsonrpc sends) and a body split across writes.
        body = ping_body("two")
        conn.send(
            b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body[:10]
        )
        time.sleep(0.05)
        conn.send(body[10:])
        _, reply = conn.read_content_length()
        assert_pong(reply, alpd, "two")


def test_content_length_reply_length_counts_bytes_not_characters(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send_content_length(ping_body("ключ-🔑"))
        _, reply = conn.read_content_length()
        assert_pong(reply, alpd, "ключ-🔑")


def test_batch_replies_to_requests_and_never_to_the_notification_inside(
    alpd: DaemonProcess,
) -> None:
    batch = [
        {"jsonrpc": "2.0", "id": 1, "method": "daemon/ping"},
        {"jsonrpc": "2.0", "method": "thread/create", "params": {"title": "from a notification"}},
        {"jsonrpc": "2.0", "id": "b", "method": "daemon/ping"},
        {"jsonrpc": "2.0", "id": 3, "method": "no/such"},
    ]
    with RawConnection(alpd.socket_path) as conn:
        conn.send_json(batch)
        replies = conn.read_json()
        assert isinstance(replies, list)
        by_id = {reply["id"]: reply for reply in replies}
        assert set(by_id) == {1, "b", 3}
        assert_pong(by_id[1], alpd, 1)
        assert_pong(by_id["b"], alpd, "b")
        assert error_of(by_id[3])["code"] == errors.METHOD_NOT_FOUND
        # The notification was still executed, silently.
        listed = conn.request("thread/list", {"all": True}, id=9)["result"]["threads"]
        assert [t["title"] for t in listed] == ["from a notification"]


def test_garbage_gets_parse_error_and_the_same_connection_still_answers(
    alpd: DaemonProcess,
) -> None:
    with RawConnection(alpd.socket_path) as conn:
        for garbage in (b"garbage", b'{"jsonrpc": "2.0", "id": 1', b"\xff\xfe\x00{", b"{}}"):
            conn.send(garbage + b"\n")
            reply = conn.read_json()
            assert reply["id"] is None
            assert error_of(reply)["code"] == errors.PARSE_ERROR
            assert_pong(conn.request("daemon/ping", id=2), alpd, 2)


def test_invalid_request_objects_get_invalid_request(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        for message in (
            {"id": 1, "method": "daemon/ping"},  # no jsonrpc member
            {"jsonrpc": "1.0", "id": 1, "method": "daemon/ping"},
            {"jsonrpc": "2.0", "id": 1, "method": 5},
            {"jsonrpc": "2.0", "id": 1, "method": "daemon/ping", "params": "x"},
            42,
        ):
            conn.send_json(message)
            assert error_of(conn.read_json())["code"] == errors.INVALID_REQUEST


def test_unknown_method_is_method_not_found(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        reply = conn.request("thread/frobnicate", {}, id=5)
        assert reply["id"] == 5
        error = error_of(reply)
        assert error["code"] == errors.METHOD_NOT_FOUND
        assert "thread/frobnicate" in error["message"]


def test_wrongly_typed_params_are_invalid_params(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        for method, params in (
            ("thread/list", {"all": "yes"}),
            ("thread/list", {"status": "sleeping"}),
            ("thread/close", {}),
            ("thread/close", {"threadId": 12}),
        ):
            reply = conn.request(method, params, id=3)
            assert reply["id"] == 3
            assert error_of(reply)["code"] == errors.INVALID_PARAMS, (method, params, reply)
        assert_pong(conn.request("daemon/ping", id=4), alpd, 4)


def test_positional_params_are_invalid_params_saying_params_are_named(
    alpd: DaemonProcess,
) -> None:
    with RawConnection(alpd.socket_path) as conn:
        reply = conn.request("thread/create", ["a title"], id=8)
        error = error_of(reply)
        assert error["code"] == errors.INVALID_PARAMS
        assert "named" in error["message"]
        assert conn.request("thread/list", {"all": True}, id=9)["result"]["threads"] == []


def test_empty_batch_is_one_invalid_request_not_an_array(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send(b"[]\n")
        reply = conn.read_json()
        assert isinstance(reply, dict)
        assert reply["id"] is None
        assert error_of(reply)["code"] == errors.INVALID_REQUEST


def test_batch_of_invalid_elements_gets_one_error_each(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send(b"[1, 2, 3]\n")
        replies = conn.read_json()
        assert isinstance(replies, list) and len(replies) == 3
        assert {error_of(r)["code"] for r in replies} == {errors.INVALID_REQUEST}


def test_batch_over_the_cap_is_refused_with_batch_too_large(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send_json([PING] * 257)
        error = error_of(conn.read_json())
        assert error["code"] == errors.code_of("BATCH_TOO_LARGE")
        assert error["data"]["name"] == "BATCH_TOO_LARGE"
        conn.send_json([PING] * 256)
        assert len(conn.read_json()) == 256


def test_batch_of_only_notifications_gets_nothing_back(alpd: DaemonProcess) -> None:
    notification = {"jsonrpc": "2.0", "method": "daemon/ping"}
    with RawConnection(alpd.socket_path) as conn:
        conn.send_json([notification, notification, {"jsonrpc": "2.0", "method": "no/such"}])
        conn.send_json({"jsonrpc": "2.0", "method": "no/such"})
        conn.send_json({"jsonrpc": "2.0", "method": "thread/list", "params": {"all": "yes"}})
        conn.assert_quiet(0.3)
        # The first thing to come back is the reply to the next request.
        assert_pong(conn.request("daemon/ping", id=10), alpd, 10)


@pytest.mark.parametrize("id", ["abc", "", "ключ", 0, -1, 2**53, None])
def test_request_id_is_echoed_with_its_type(alpd: DaemonProcess, id: Any) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send(ping_body(id) + b"\n")
        reply = conn.read_json()
        assert type(reply["id"]) is type(id)
        assert_pong(reply, alpd, id)
        # Error replies echo the id as well.
        reply = conn.request("no/such", id=id)
        assert reply["id"] == id and type(reply["id"]) is type(id)


@pytest.mark.parametrize("id", [1.5, True, {"a": 1}, [1]])
def test_request_with_an_id_of_another_type_is_invalid_and_answered_with_null(
    alpd: DaemonProcess, id: Any
) -> None:
    with RawConnection(alpd.socket_path) as conn:
        reply = conn.request("daemon/ping", id=id)
        assert reply["id"] is None
        assert error_of(reply)["code"] == errors.INVALID_REQUEST


def test_oversized_ndjson_frame_is_refused_and_the_connection_goes_on(
    alpd: DaemonProcess,
) -> None:
    oversized = b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping","params":{"pad":"'
    oversized += b"x" * (MIB + 16) + b'"}}\n'
    with RawConnection(alpd.socket_path, timeout=20) as conn:
        conn.send(oversized)
        reply = conn.read_json()
        assert reply["id"] == 1  # the request's id, read from the frame's head
        error = error_of(reply)
        assert error["code"] == errors.code_of("FRAME_TOO_LARGE")
        assert error["data"]["name"] == "FRAME_TOO_LARGE"
        assert error["data"]["limit"] == MIB
        assert_pong(conn.request("daemon/ping", id=2), alpd, 2)


def test_frame_just_under_the_cap_is_served(alpd: DaemonProcess) -> None:
    head = b'{"jsonrpc":"2.0","id":3,"method":"daemon/ping","params":{"pad":"'
    tail = b'"}}'
    frame = head + b"y" * (MIB - len(head) - len(tail)) + tail
    assert len(frame) == MIB
    with RawConnection(alpd.socket_path, timeout=20) as conn:
        conn.send(frame + b"\n")
        assert_pong(conn.read_json(), alpd, 3)


def test_oversized_content_length_frame_is_refused_and_the_connection_goes_on(
    alpd: DaemonProcess,
) -> None:
    body = b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping","params":{"pad":"'
    body += b"x" * (MIB + 16) + b'"}}'
    with RawConnection(alpd.socket_path, timeout=20) as conn:
        conn.send_content_length(body)
        _, reply = conn.read_content_length()
        assert reply["id"] == 1
        error = error_of(reply)
        assert error["code"] == errors.code_of("FRAME_TOO_LARGE")
        assert error["data"]["name"] == "FRAME_TOO_LARGE"
        conn.send_content_length(ping_body(2))
        _, reply = conn.read_content_length()
        assert_pong(reply, alpd, 2)
    with RawConnection(alpd.socket_path) as other:
        assert_pong(other.request("daemon/ping", id=3), alpd, 3)


def test_content_length_header_announcing_too_much_is_refused_after_its_head_only(
    alpd: DaemonProcess,
) -> None:
    """The head (4 KiB) is waited for, to answer with the request's id; the rest never is."""
    with RawConnection(alpd.socket_path) as conn:
        conn.send(b"Content-Length: 999999999999\r\n\r\n")
        conn.send(b'{"jsonrpc":"2.0","id":"req-9","method":"daemon/ping","params":{"pad":"')
        conn.send(b"x" * HEAD_BYTES)
        _, reply = conn.read_content_length()
        assert reply["id"] == "req-9"
        assert error_of(reply)["data"]["name"] == "FRAME_TOO_LARGE"


@pytest.mark.parametrize("framing", ["ndjson", "content-length"])
@pytest.mark.parametrize(
    "head",
    [
        # the id after a params object longer than the head: unreadable in time
        b'{"jsonrpc":"2.0","method":"daemon/ping","params":{"pad":"',
        # a batch has many ids; an id no reply can carry
        b'[{"jsonrpc":"2.0","id":1,"method":"daemon/ping","params":{"pad":"',
        b'{"jsonrpc":"2.0","id":1.5,"method":"daemon/ping","params":{"pad":"',
    ],
)
def test_an_oversized_frame_whose_id_cannot_be_read_is_answered_then_closed(
    alpd: DaemonProcess, framing: str, head: bytes
) -> None:
    """vscode-jsonrpc waits on a request's id: a reply with id null would leave its request
    pending forever; a closed connection fails it at once."""
    body = head + b"x" * (MIB + 16) + b'"}}' + (b"]" if head.startswith(b"[") else b"")
    with RawConnection(alpd.socket_path, timeout=20) as conn:
        try:  # the daemon may close before the rest of the frame is sent
            if framing == "ndjson":
                conn.send(body + b"\n")
            else:
                conn.send_content_length(body)
        except (BrokenPipeError, ConnectionResetError):
            pass
        rest = conn.read_until_closed()
    assert b'"FRAME_TOO_LARGE"' in rest and b'"id":null' in rest, rest[:300]
    assert b"could not be read" in rest
    assert_pong(RawConnection(alpd.socket_path).request("daemon/ping", id=5), alpd, 5)


def test_unrecoverable_header_block_gets_an_error_then_a_close(alpd: DaemonProcess) -> None:
    for bad in (b"Content-Length: ten\r\n\r\n", b"Content-Type: x\r\n\r\n", b"Cx" * 5000):
        with RawConnection(alpd.socket_path) as conn:
            conn.send(bad)
            rest = conn.read_until_closed()
            assert b'"code":-32700' in rest, rest
            assert_no_traceback(rest.decode(errors="replace"))
    assert_pong(RawConnection(alpd.socket_path).request("daemon/ping"), alpd)


def test_200_concurrent_connections_each_get_their_ping_answered(alpd: DaemonProcess) -> None:
    count = 200
    barrier = threading.Barrier(count, timeout=30)
    results: list[Any] = [None] * count

    def client(index: int) -> None:
        try:
            with RawConnection(alpd.socket_path, timeout=30) as conn:
                barrier.wait()
                results[index] = conn.request("daemon/ping", id=index)
        except BaseException as exc:
            results[index] = exc

    threads = [threading.Thread(target=client, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    for index, reply in enumerate(results):
        assert isinstance(reply, dict), (index, reply)
        assert_pong(reply, alpd, index)


def test_stalled_partial_frame_is_cut_at_the_deadline_without_affecting_others(
    alpd: DaemonProcess,
) -> None:
    """Slowloris: a byte a second does not keep a partial frame alive past the deadline."""
    started = time.monotonic()
    trickler = RawConnection(alpd.socket_path, timeout=30)
    stalled_lsp = RawConnection(alpd.socket_path, timeout=30)
    trickler.send(b'{"jsonrpc":')
    stalled_lsp.send(b"Content-Length: 40\r\n\r\n{")
    with RawConnection(alpd.socket_path) as other:
        pings = 0
        while time.monotonic() - started < FRAME_DEADLINE - 1.5:
            assert_pong(other.request("daemon/ping", id=pings), alpd, pings)
            pings += 1
            trickler.send(b" ")
            time.sleep(1.0)
        for conn in (trickler, stalled_lsp):
            rest = conn.read_until_closed(timeout=FRAME_DEADLINE * (1 + DEADLINE_SPREAD))
            assert b"FRAME_TIMEOUT" in rest, rest
            # Each refusal comes in the framing its connection chose.
            assert rest.startswith(b"Content-Length:") == (conn is stalled_lsp), rest
            assert str(errors.code_of("FRAME_TIMEOUT")).encode() in rest
        elapsed = time.monotonic() - started
        # each connection's deadline is spread over [1, 1 + DEADLINE_SPREAD) times the limit
        assert FRAME_DEADLINE - 1 <= elapsed <= FRAME_DEADLINE * (1 + DEADLINE_SPREAD) + 3, elapsed
        assert_pong(other.request("daemon/ping", id="after"), alpd, "after")
    trickler.close()
    stalled_lsp.close()


def test_idle_connection_without_a_partial_frame_is_not_cut(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        assert_pong(conn.request("daemon/ping", id=1), alpd, 1)
        conn.send(b"\n\n")  # blank lines are not a partial frame
        conn.assert_quiet(0.5)
        assert_pong(conn.request("daemon/ping", id=2), alpd, 2)


def test_error_replies_never_carry_traceback_text(alpd: DaemonProcess) -> None:
    probes: list[bytes] = [
        b"\x00\x01\x02\n",
        b'{"jsonrpc":"2.0","id":1,"method":"thread/list","params":{"limit":"many"}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"thread/close","params":{"threadId":"thread_x"}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"thread/create","params":{"cwd":"a\\u0000b"}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"thread/list","params":{"cwd":"\\ud800"}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"thread/list","params":{"limit":1e400}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"thread/list","params":{"limit":99999999999999999999}}\n',
        b'{"jsonrpc":"2.0","id":1,"method":"events/subscribe","params":{"events":[1]}}\n',
    ]
    with RawConnection(alpd.socket_path) as conn:
        for probe in probes:
            conn.send(probe)
            reply = conn.read_json()
            assert "error" in reply or "result" in reply, reply
            assert_no_traceback(reply)
            if "error" in reply:
                assert "data" not in reply["error"] or isinstance(reply["error"]["data"], dict)
        assert_pong(conn.request("daemon/ping", id=2), alpd, 2)


@pytest.mark.parametrize("opener", [b"[", b'{"a":'])
def test_deeply_nested_json_gets_an_error_and_the_daemon_survives(
    alpd: DaemonProcess, opener: bytes
) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send(opener * 5000 + b"\n")
        reply = conn.read_json()
        assert error_of(reply)["code"] in (errors.PARSE_ERROR, errors.INVALID_REQUEST)
        assert_pong(conn.request("daemon/ping", id=2), alpd, 2)
    assert alpd.process is not None and alpd.process.poll() is None


def test_caller_input_never_surfaces_as_an_internal_error(alpd: DaemonProcess) -> None:
    """-32603 means the daemon failed; a malformed argument is the caller's error."""
    with RawConnection(alpd.socket_path) as conn:
        for method, params in (
            ("thread/create", {"cwd": "a\u0000b"}),
            ("thread/list", {"cwd": "a\u0000b"}),
            ("thread/list", {"limit": 2**70}),
        ):
            reply = conn.request(method, params, id=1)
            if "error" in reply:
                error = error_of(reply)
                assert error["code"] != errors.INTERNAL_ERROR, (method, params, error)


def test_daemon_survives_clients_that_leave_before_their_replies(alpd: DaemonProcess) -> None:
    for _ in range(20):
        conn = RawConnection(alpd.socket_path)
        conn.send_json([PING] * 256)
        conn.close()
    with RawConnection(alpd.socket_path) as conn:
        assert_pong(conn.request("daemon/ping"), alpd)


def test_half_closed_client_still_gets_its_replies_then_a_close(alpd: DaemonProcess) -> None:
    with RawConnection(alpd.socket_path) as conn:
        conn.send(ping_body(1) + b"\n" + ping_body(2) + b"\n")
        conn.sock.shutdown(socket.SHUT_WR)
        ids = {conn.read_json()["id"], conn.read_json()["id"]}
        assert ids == {1, 2}
        assert conn.read_until_closed() == b""
