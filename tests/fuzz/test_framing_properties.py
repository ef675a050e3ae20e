"""Property tests of the framing state machine and JSON-RPC parsing, plus a real-daemon fuzz.

h11's rule for its parser (fuzz/README.rst): garbage is either accepted or refused with the
parser's own error, never any other exception. Ours: `FrameDecoder` yields frames or raises
`FrameTooLarge`/`FramingBroken`; `parse_frame` never raises; the daemon answers every byte
blob with valid JSON-RPC replies or a clean close, and keeps answering pings.
"""

from __future__ import annotations

import itertools
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from budget import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from alpd.testing.daemon import DaemonProcess, running_daemon
from protocol import errors, jsonrpc
from protocol.framing import (
    FrameDecoder,
    FrameTooLarge,
    Framing,
    FramingBroken,
    encode_frame,
)

BLANK = b" \t\r\n"
SPEC_CODES = {
    errors.PARSE_ERROR,
    errors.INVALID_REQUEST,
    errors.METHOD_NOT_FOUND,
    errors.INVALID_PARAMS,
    errors.INTERNAL_ERROR,
}
DOMAIN_CODES = {code for code, _ in errors.DOMAIN_ERRORS.values()}


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    """`data` cut at the given offsets (taken modulo its length, any order, repeats ok)."""
    points = sorted({0, len(data), *(c % (len(data) + 1) for c in cuts)})
    return [data[a:b] for a, b in itertools.pairwise(points)]


def decode_all(chunks: list[bytes], max_frame: int) -> tuple[list[bytes], int, bool]:
    """Feed chunk by chunk; returns (frames, number of FrameTooLarge, ended broken)."""
    decoder = FrameDecoder(max_frame)
    frames: list[bytes] = []
    too_large = 0
    for chunk in chunks:
        decoder.feed(chunk)
        while True:
            try:
                frame = decoder.next_frame()
            except FrameTooLarge as exc:
                assert exc.limit == max_frame and exc.size > max_frame
                too_large += 1
                continue
            except FramingBroken:
                return frames, too_large, True
            if frame is None:
                break
            assert isinstance(frame, bytes)
            assert len(frame) <= max_frame
            frames.append(frame)
    return frames, too_large, False


framing_bytes = st.one_of(
    st.binary(max_size=400),
    st.lists(
        st.sampled_from(
            [
                *(b"{", b"}", b"[", b"]", b"\n", b"\r\n", b"\r\n\r\n", b" ", b"C", b"c"),
                *(b"Content-Length: ", b"content-length:", b"5", b"0", b"-1", b"99999", b":"),
                *(b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}', b"\xff", b"\x00"),
                b"x" * 70,
            ]
        ),
        max_size=40,
    ).map(b"".join),
)


@settings(max_examples=examples(400), deadline=None)
@given(data=framing_bytes, cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_decoder_on_arbitrary_bytes_yields_only_frames_or_its_own_errors(
    data: bytes, cuts: list[int]
) -> None:
    decode_all(split(data, cuts), max_frame=64)


@settings(max_examples=examples(300), deadline=None)
@given(data=framing_bytes, cuts=st.lists(st.integers(0, 10_000), max_size=12))
def test_decoder_result_does_not_depend_on_chunking(data: bytes, cuts: list[int]) -> None:
    whole = decode_all([data], max_frame=64)
    assert decode_all(split(data, cuts), max_frame=64) == whole
    assert decode_all([bytes([b]) for b in data], max_frame=64) == whole


header_values = st.one_of(
    st.integers(0, 10**30).map(lambda n: str(n).encode()),
    st.integers(1, 9000).map(lambda n: b"9" * n),
    st.integers(1, 9000).map(lambda n: b"0" * n + b"2"),
    st.binary(max_size=60),
    st.sampled_from([b"", b"-1", b"+2", b" 2 ", b"2\t", b"\xd9\xa2", b"0x10", b"1e3"]),
)
header_names = st.sampled_from(
    [b"Content-Length", b"content-length", b" CONTENT-LENGTH ", b"Content-Type", b"X", b""]
) | st.binary(max_size=20)
header_blocks = st.lists(
    st.tuples(header_names, st.sampled_from([b":", b": ", b"", b"::"]), header_values),
    min_size=1,
    max_size=6,
).map(lambda lines: b"\r\n".join(n + sep + v for n, sep, v in lines) + b"\r\n\r\n")


@settings(max_examples=examples(400), deadline=None)
@given(
    head=header_blocks,
    body=st.binary(max_size=80),
    cuts=st.lists(st.integers(0, 20_000), max_size=8),
)
def test_header_parser_yields_only_frames_or_its_own_errors(
    head: bytes, body: bytes, cuts: list[int]
) -> None:
    # Starts with "C" so the stream is read as Content-Length framing, whatever follows.
    decode_all(split(b"C" + head + body, cuts), max_frame=64)


ndjson_frame = st.binary(max_size=120).map(lambda b: b"{" + b.replace(b"\n", b""))


@settings(max_examples=examples(300), deadline=None)
@given(
    frames=st.lists(ndjson_frame, min_size=1, max_size=12),
    separators=st.lists(st.sampled_from([b"\n", b"\r\n", b"\n\n", b" \n\t\n"]), min_size=12),
    cuts=st.lists(st.integers(0, 10_000), max_size=20),
)
def test_ndjson_frames_are_reassembled_identically_under_any_chunking(
    frames: list[bytes], separators: list[bytes], cuts: list[int]
) -> None:
    stream = b"".join(f + sep for f, sep in zip(frames, separators, strict=False))
    expected = [f.strip(BLANK) for f in frames if f.strip(BLANK)]
    decoded, too_large, broken = decode_all(split(stream, cuts), max_frame=1024)
    assert (decoded, too_large, broken) == (expected, 0, False)


@settings(max_examples=examples(300), deadline=None)
@given(
    payloads=st.lists(st.binary(max_size=300), min_size=1, max_size=10),
    cuts=st.lists(st.integers(0, 10_000), max_size=20),
)
def test_content_length_round_trips_any_payload(payloads: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(encode_frame(Framing.CONTENT_LENGTH, p) for p in payloads)
    decoded, too_large, broken = decode_all(split(stream, cuts), max_frame=300)
    assert (decoded, too_large, broken) == (payloads, 0, False)


@settings(max_examples=examples(200), deadline=None)
@given(
    sizes=st.lists(st.integers(0, 200), min_size=1, max_size=8),
    cuts=st.lists(st.integers(0, 10_000), max_size=20),
)
def test_content_length_skips_each_oversized_frame_and_keeps_the_rest(
    sizes: list[int], cuts: list[int]
) -> None:
    limit = 100
    payloads = [bytes([65 + i % 26]) * size for i, size in enumerate(sizes)]
    stream = b"".join(encode_frame(Framing.CONTENT_LENGTH, p) for p in payloads)
    decoded, too_large, broken = decode_all(split(stream, cuts), max_frame=limit)
    assert decoded == [p for p in payloads if len(p) <= limit]
    assert too_large == sum(len(p) > limit for p in payloads)
    assert not broken


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=10), children, max_size=5)
    ),
    max_leaves=30,
)
message_like = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2.0]) | json_values,
        "id": st.integers() | st.text(max_size=5) | st.none() | json_values,
        "method": st.sampled_from(["daemon/ping", "thread/list", "rpc.x"]) | json_values,
        "params": st.dictionaries(st.text(max_size=5), json_values, max_size=3) | json_values,
    },
)


def check_parsed(items: list[jsonrpc.Parsed], is_batch: bool, document: Any) -> None:
    assert items
    if isinstance(document, list) and document and len(document) <= jsonrpc.MAX_BATCH:
        assert is_batch and len(items) == len(document)
    else:
        assert not is_batch and len(items) == 1
    for item in items:
        if isinstance(item, jsonrpc.ErrorReply):
            assert item.code in SPEC_CODES | DOMAIN_CODES
            assert item.id is None or type(item.id) in (int, str)
        else:
            assert isinstance(item, jsonrpc.Call)
            assert isinstance(item.method, str)
            assert item.params is None or isinstance(item.params, dict | list)
            assert item.id is None or type(item.id) in (int, str)
            assert item.is_notification == (item.id is None and "id" not in _raw(document, item))


def _raw(document: Any, call: jsonrpc.Call) -> dict[str, Any]:
    """The source object of `call` (the first one that matches it)."""
    candidates = document if isinstance(document, list) else [document]
    for candidate in candidates:
        if (
            isinstance(candidate, dict)
            and candidate.get("jsonrpc") == "2.0"
            and candidate.get("method") == call.method
            and ("id" in candidate) == (not call.is_notification)
            and candidate.get("id") == call.id
        ):
            return candidate
    raise AssertionError("call without a source")


@settings(max_examples=examples(500), deadline=None)
@given(data=st.binary(max_size=300))
def test_parse_frame_never_raises_on_arbitrary_bytes(data: bytes) -> None:
    items, _ = jsonrpc.parse_frame(data)
    for item in items:
        if isinstance(item, jsonrpc.ErrorReply):
            assert item.code in SPEC_CODES | DOMAIN_CODES


@settings(max_examples=examples(500), deadline=None)
@given(document=json_values | message_like | st.lists(message_like, max_size=6))
def test_parse_frame_never_raises_on_json_values(document: Any) -> None:
    items, is_batch = jsonrpc.parse_frame(json.dumps(document).encode())
    check_parsed(items, is_batch, document)


@pytest.mark.parametrize("depth", [100, 100_000])
@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_parse_frame_never_raises_on_deep_nesting(depth: int, opener: str) -> None:
    items, is_batch = jsonrpc.parse_frame((opener * depth).encode())
    assert not is_batch or all(isinstance(i, jsonrpc.ErrorReply) for i in items)
    for item in items:
        if isinstance(item, jsonrpc.ErrorReply):
            assert item.code in SPEC_CODES | DOMAIN_CODES


# The real daemon


@pytest.fixture(scope="module")
def fuzz_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DaemonProcess]:
    with running_daemon(tmp_path_factory.mktemp("fuzz")) as daemon:
        yield daemon


def replies_in(data: bytes, content_length: bool) -> list[Any]:
    """Split what the daemon wrote into decoded messages (asserting the framing is right)."""
    messages: list[Any] = []
    if not content_length:
        assert data == b"" or data.endswith(b"\n"), data[-200:]
        return [json.loads(line) for line in data.split(b"\n") if line]
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep and head.lower().startswith(b"content-length: "), data[:200]
        length = int(head.split(b":")[1])
        messages.append(json.loads(rest[:length]))
        assert len(rest) >= length
        data = rest[length:]
    return messages


def assert_valid_reply(message: Any) -> None:
    items = message if isinstance(message, list) else [message]
    assert items
    for item in items:
        assert item["jsonrpc"] == "2.0"
        assert ("result" in item) != ("error" in item), item
        assert item["id"] is None or type(item["id"]) in (int, str)
        if "error" in item:
            assert type(item["error"]["code"]) is int
            assert isinstance(item["error"]["message"], str)
            assert "Traceback" not in json.dumps(item)


def exchange(path: Path, blob: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(15)
        sock.connect(str(path))
        try:
            sock.sendall(blob)
            sock.shutdown(socket.SHUT_WR)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the daemon may close first (an unrecoverable header block)
        received = b""
        try:
            while chunk := sock.recv(65536):
                received += chunk
        except ConnectionResetError:
            pass  # closed with our bytes unread: a clean close for this purpose
        return received


def ping(path: Path) -> dict[str, Any]:
    reply = exchange(path, b'{"jsonrpc":"2.0","id":"p","method":"daemon/ping"}\n')
    result: dict[str, Any] = json.loads(reply)
    return result


request_pieces = st.sampled_from(
    [
        b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}',
        b'{"jsonrpc":"2.0","method":"daemon/ping"}',
        b'{"jsonrpc":"2.0","id":"s","method":"thread/list","params":{"all":true}}',
        b'{"jsonrpc":"2.0","id":2,"method":"thread/list","params":[1]}',
        b'{"jsonrpc":"2.0","id":3,"method":"nope"}',
        b"[",
        b"]",
        b",",
        b"{",
        b"}",
        b"\n",
        b"\r\n",
        b"Content-Length: 2\r\n\r\n",
        b"null",
        b'"\\u0000"',
        b"\xc3\x28",
        # Headers that used to end the daemon or slip past the header cap.
        b"Content-Length: " + b"9" * 4301 + b"\r\n\r\n",
        b"Content-Length: " + b"0" * 30 + b"2\r\n\r\n{}",
        b"Content-Length: 2\r\nX-Pad: " + b"a" * 9000 + b"\r\n\r\n{}",
    ]
)
blobs = st.one_of(
    st.binary(min_size=1, max_size=600),
    st.lists(request_pieces, min_size=1, max_size=25).map(b"".join),
    st.tuples(st.binary(max_size=40), st.lists(request_pieces, max_size=10)).map(
        lambda t: t[0] + b"".join(t[1])
    ),
)


@settings(
    max_examples=examples(120),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(blob=blobs)
def test_daemon_answers_any_bytes_with_json_rpc_or_a_clean_close(
    fuzz_daemon: DaemonProcess, blob: bytes
) -> None:
    received = exchange(fuzz_daemon.socket_path, blob)
    content_length = blob.lstrip(BLANK)[:1] in (b"C", b"c")
    for message in replies_in(received, content_length):
        assert_valid_reply(message)
    assert fuzz_daemon.process is not None and fuzz_daemon.process.poll() is None
    assert ping(fuzz_daemon.socket_path)["result"]["pid"] == fuzz_daemon.pid


@pytest.fixture(scope="module")
def settled_execution(fuzz_daemon: DaemonProcess, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A headless run that printed one line to each stream and settled; its thread's id is
    the prefix, its execution's id the rest (`thread|execution`)."""
    cwd = tmp_path_factory.mktemp("fuzz-run")
    thread = fuzz_daemon.call("thread/create", {"cwd": str(cwd)})
    assert isinstance(thread, dict)
    started = fuzz_daemon.call(
        "thread/continue",
        {"threadId": thread["id"], "runtime": "command", "headless": True, "cwd": str(cwd),
         "args": ["sh", "-c", "echo out; echo err >&2"]},
    )  # fmt: skip
    assert isinstance(started, dict)
    execution_id = started["execution"]["id"]
    for _ in range(30):
        done = fuzz_daemon.call("execution/wait", {"executionId": execution_id, "timeout": 2})
        if isinstance(done, dict) and done["status"] == "settled":
            return f"{thread['id']}|{execution_id}"
    raise AssertionError("the run did not settle")


def call_raw(path: Path, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    reply: dict[str, Any] = json.loads(exchange(path, body.encode() + b"\n"))
    return reply


#: the integers the fuzz run sent: either end of every machine width, and around them
edge_ints = st.one_of(
    st.sampled_from([2**k + d for k in (31, 32, 53, 62, 63, 64, 80) for d in (-1, 0, 1)]),
    st.integers(min_value=0, max_value=2**70),
)
durations = st.one_of(
    st.builds(lambda n, unit: f"{n}{unit}", edge_ints, st.sampled_from("wdhms")),
    st.from_regex(r"\A(\d{1,15}w)?(\d{1,15}d)?(\d{1,15}h)?(\d{1,15}m)?(\d{1,15}s)?\Z"),
)


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(stdout_offset=edge_ints, stderr_offset=edge_ints, every=durations)
def test_extreme_offsets_and_intervals_get_named_errors_never_internal_error(
    fuzz_daemon: DaemonProcess,
    settled_execution: str,
    stdout_offset: int,
    stderr_offset: int,
    every: str,
) -> None:
    thread_id, execution_id = settled_execution.split("|")
    replies = [
        call_raw(
            fuzz_daemon.socket_path,
            "execution/logs",
            {
                "executionId": execution_id,
                "stdoutOffset": stdout_offset,
                "stderrOffset": stderr_offset,
            },
        ),
        call_raw(
            fuzz_daemon.socket_path,
            "schedule/create",
            {"threadId": thread_id, "prompt": "p", "every": every},
        ),
    ]
    for reply in replies:
        assert_valid_reply(reply)
        if "error" in reply:
            assert reply["error"]["code"] != errors.INTERNAL_ERROR, reply
        else:
            created = reply["result"]
            if "every" in created:  # a valid interval: take the schedule away again
                fuzz_daemon.call("schedule/delete", {"scheduleId": created["id"]})
