"""FrameDecoder and encode_frame, example by example (the properties are in tests/fuzz)."""

from __future__ import annotations

import pytest

from protocol.framing import (
    DEFAULT_MAX_FRAME_BYTES,
    HEAD_BYTES,
    MAX_HEADER_BYTES,
    MAX_LENGTH_DIGITS,
    FrameDecoder,
    FrameTooLarge,
    Framing,
    FramingBroken,
    encode_frame,
    leading_id,
)

PING = b'{"jsonrpc":"2.0","id":1,"method":"daemon/ping"}'


def frames_of(decoder: FrameDecoder) -> list[bytes]:
    out: list[bytes] = []
    while (frame := decoder.next_frame()) is not None:
        out.append(frame)
    return out


def decoded(data: bytes, max_frame: int = DEFAULT_MAX_FRAME_BYTES) -> list[bytes]:
    decoder = FrameDecoder(max_frame)
    decoder.feed(data)
    return frames_of(decoder)


# Detection


@pytest.mark.parametrize(
    ("first", "framing"),
    [
        (b"{", Framing.NDJSON),
        (b"[", Framing.NDJSON),
        (b"x", Framing.NDJSON),
        (b"\xff", Framing.NDJSON),
        (b"C", Framing.CONTENT_LENGTH),
        (b"c", Framing.CONTENT_LENGTH),
    ],
)
def test_framing_is_detected_from_the_first_byte(first: bytes, framing: Framing) -> None:
    decoder = FrameDecoder()
    decoder.feed(first)
    assert decoder.next_frame() is None
    assert decoder.framing is framing


def test_blank_bytes_before_the_first_frame_do_not_decide_the_framing() -> None:
    decoder = FrameDecoder()
    decoder.feed(b" \r\n\t\n")
    assert decoder.next_frame() is None
    assert decoder.framing is None
    assert not decoder.has_partial_frame
    decoder.feed(b"Content-Length: 2\r\n\r\n{}")
    assert frames_of(decoder) == [b"{}"]
    assert decoder.framing is Framing.CONTENT_LENGTH


def test_framing_once_chosen_stays_for_the_connection() -> None:
    decoder = FrameDecoder()
    decoder.feed(PING + b"\nContent-Length: 2\r\n\r\n{}\n")
    assert frames_of(decoder) == [PING, b"Content-Length: 2", b"{}"]
    assert decoder.framing is Framing.NDJSON


# NDJSON


def test_ndjson_splits_on_newlines() -> None:
    assert decoded(b"{1}\n{2}\n[3]\n") == [b"{1}", b"{2}", b"[3]"]


def test_ndjson_accepts_crlf_and_strips_surrounding_blanks() -> None:
    assert decoded(b"{1}\r\n  {2}\t \r\n") == [b"{1}", b"{2}"]


def test_ndjson_skips_blank_lines() -> None:
    assert decoded(b"{1}\n\n\r\n   \n{2}\n") == [b"{1}", b"{2}"]


def test_ndjson_line_without_newline_waits_for_more() -> None:
    decoder = FrameDecoder()
    decoder.feed(b'{"jsonrpc":')
    assert decoder.next_frame() is None
    assert decoder.has_partial_frame
    decoder.feed(b'"2.0"}')
    assert decoder.next_frame() is None
    decoder.feed(b"\n")
    assert decoder.next_frame() == b'{"jsonrpc":"2.0"}'
    assert not decoder.has_partial_frame


def test_ndjson_frame_split_across_every_byte() -> None:
    decoder = FrameDecoder()
    out: list[bytes] = []
    for byte in PING + b"\n" + PING + b"\n":
        decoder.feed(bytes([byte]))
        out += frames_of(decoder)
    assert out == [PING, PING]


def test_ndjson_line_at_the_cap_is_accepted_and_one_byte_more_is_refused() -> None:
    assert decoded(b"{" + b"x" * 8 + b"}\n", max_frame=10) == [b"{xxxxxxxx}"]
    decoder = FrameDecoder(10)
    decoder.feed(b"{" + b"x" * 9 + b"}\n{ok}\n")
    with pytest.raises(FrameTooLarge) as refused:
        decoder.next_frame()
    assert (refused.value.size, refused.value.limit) == (11, 10)
    assert frames_of(decoder) == [b"{ok}"]


def test_ndjson_oversized_line_is_refused_before_its_newline_and_skipped_to_it() -> None:
    decoder = FrameDecoder(10)
    decoder.feed(b"{" + b"x" * 20)
    with pytest.raises(FrameTooLarge):
        decoder.next_frame()
    assert decoder.has_partial_frame  # still inside the refused line
    decoder.feed(b"y" * 50)
    assert decoder.next_frame() is None  # refused once, not once per chunk
    decoder.feed(b"zz\n{ok}\n")
    assert frames_of(decoder) == [b"{ok}"]
    assert not decoder.has_partial_frame


def test_ndjson_buffer_stays_bounded_while_skipping() -> None:
    decoder = FrameDecoder(10)
    decoder.feed(b"{" * 11)
    with pytest.raises(FrameTooLarge):
        decoder.next_frame()
    for _ in range(100):
        decoder.feed(b"x" * 1000)
        assert decoder.next_frame() is None
    assert len(decoder._buffer) <= 1000


# Content-Length


@pytest.mark.parametrize(
    "header",
    [b"Content-Length: 2", b"content-length: 2", b"CONTENT-LENGTH:2", b"Content-Length:   2  "],
)
def test_content_length_header_name_in_any_case_and_spacing(header: bytes) -> None:
    assert decoded(header + b"\r\n\r\n{}") == [b"{}"]


def test_content_length_with_other_headers_in_any_order() -> None:
    body = b'{"a":1}'
    data = (
        b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(body)
        + body
    )
    assert decoded(data) == [body]


def test_content_length_body_may_hold_newlines_and_header_like_text() -> None:
    body = b'{"a":\n"Content-Length: 99\r\n\r\n"}'
    assert decoded(encode_frame(Framing.CONTENT_LENGTH, body)) == [body]


def test_content_length_frames_back_to_back_and_with_blank_between() -> None:
    one = encode_frame(Framing.CONTENT_LENGTH, b"[1]")
    two = encode_frame(Framing.CONTENT_LENGTH, b"[2]")
    assert decoded(one + two + b"\r\n" + one) == [b"[1]", b"[2]", b"[1]"]


def test_content_length_zero_gives_an_empty_frame() -> None:
    assert decoded(b"Content-Length: 0\r\n\r\n") == [b""]


def test_content_length_waits_for_the_whole_body() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: 10\r\n\r\n12345")
    assert decoder.next_frame() is None
    assert decoder.has_partial_frame
    decoder.feed(b"67890extra")
    assert decoder.next_frame() == b"1234567890"


def test_content_length_header_split_across_feeds() -> None:
    decoder = FrameDecoder()
    for piece in (b"Cont", b"ent-Len", b"gth: 2\r", b"\n\r", b"\n{", b"}"):
        decoder.feed(piece)
        got = decoder.next_frame()
    assert got == b"{}"


@pytest.mark.parametrize("headers", [b"Content-Type: x", b"Cache: 1\r\nContent-Type: x"])
def test_missing_content_length_breaks_the_stream(headers: bytes) -> None:
    decoder = FrameDecoder()
    decoder.feed(headers + b"\r\n\r\n{}")
    with pytest.raises(FramingBroken, match="without Content-Length"):
        decoder.next_frame()


@pytest.mark.parametrize("value", [b"ten", b"-5", b"+5", b"5.0", b"0x10", b"", b"1 2", b"\xd9\xa3"])
def test_non_numeric_content_length_breaks_the_stream(value: bytes) -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: " + value + b"\r\n\r\n{}")
    with pytest.raises(FramingBroken, match="bad Content-Length"):
        decoder.next_frame()


def test_header_line_without_a_colon_breaks_the_stream() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length 2\r\n\r\n{}")
    with pytest.raises(FramingBroken, match="malformed header"):
        decoder.next_frame()


def test_header_block_too_long_breaks_the_stream() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: 2\r\nX-Pad: " + b"a" * MAX_HEADER_BYTES)
    with pytest.raises(FramingBroken, match="longer than"):
        decoder.next_frame()


def test_header_block_over_the_cap_is_refused_even_when_it_arrives_whole() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: 2\r\nX-Pad: " + b"a" * 9 * 1024 + b"\r\n\r\n{}")
    with pytest.raises(FramingBroken, match="longer than"):
        decoder.next_frame()


def test_header_block_of_exactly_the_cap_is_read() -> None:
    head = b"Content-Length: 2\r\nX-Pad: "
    head += b"a" * (MAX_HEADER_BYTES - len(head))
    assert decoded(head + b"\r\n\r\n{}") == [b"{}"]


@pytest.mark.parametrize("digits", [MAX_LENGTH_DIGITS + 1, 4301, 8000])
def test_content_length_with_too_many_digits_breaks_the_stream(digits: int) -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: " + b"9" * digits + b"\r\n\r\n")
    with pytest.raises(FramingBroken, match="bad Content-Length"):
        decoder.next_frame()


def test_content_length_with_leading_zeros_up_to_the_digit_cap_is_read() -> None:
    zeros = b"0" * (MAX_LENGTH_DIGITS - 1)
    assert decoded(b"Content-Length: " + zeros + b"2\r\n\r\n{}") == [b"{}"]


def test_header_block_just_under_the_cap_waits() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"C" * MAX_HEADER_BYTES)
    assert decoder.next_frame() is None


def test_oversized_content_length_is_refused_once_its_head_came_and_its_body_skipped() -> None:
    decoder = FrameDecoder(10)
    decoder.feed(b"Content-Length: 25\r\n\r\n" + b"x" * 5)
    assert decoder.next_frame() is None  # waits for the head (10 bytes: the cap) to read an id
    assert decoder.has_partial_frame
    decoder.feed(b"y" * 5)
    with pytest.raises(FrameTooLarge) as refused:
        decoder.next_frame()
    assert (refused.value.size, refused.value.limit) == (25, 10)
    assert refused.value.head == b"xxxxxyyyyy"
    assert decoder.has_partial_frame
    decoder.feed(b"x" * 5)
    assert decoder.next_frame() is None
    decoder.feed(b"x" * 10 + encode_frame(Framing.CONTENT_LENGTH, b"{ok}"))
    assert frames_of(decoder) == [b"{ok}"]
    assert not decoder.has_partial_frame


def test_content_length_at_the_cap_is_accepted() -> None:
    assert decoded(encode_frame(Framing.CONTENT_LENGTH, b"x" * 10), max_frame=10) == [b"x" * 10]


def test_huge_announced_length_is_refused_once_its_head_came_not_its_body() -> None:
    decoder = FrameDecoder()
    decoder.feed(b"Content-Length: 99999999999999999999\r\n\r\n")
    assert decoder.next_frame() is None
    decoder.feed(b'{"id":7,' + b" " * HEAD_BYTES)
    with pytest.raises(FrameTooLarge) as refused:
        decoder.next_frame()
    assert len(refused.value.head) == HEAD_BYTES
    assert leading_id(refused.value.head) == (True, 7)


def test_an_oversized_ndjson_line_keeps_its_head() -> None:
    decoder = FrameDecoder(HEAD_BYTES * 2)
    line = b'{"jsonrpc":"2.0","id":"a-1","params":"' + b"x" * HEAD_BYTES * 3
    decoder.feed(line)
    with pytest.raises(FrameTooLarge) as refused:
        decoder.next_frame()
    assert refused.value.head == line[:HEAD_BYTES]
    decoder.feed(b'"}\n')
    assert frames_of(decoder) == []
    whole = FrameDecoder(HEAD_BYTES * 2)
    whole.feed(line + b'"}\n')
    with pytest.raises(FrameTooLarge) as refused:
        whole.next_frame()
    assert refused.value.head == line[:HEAD_BYTES]


@pytest.mark.parametrize(
    ("head", "found"),
    [
        (b'{"jsonrpc":"2.0","id":17,"method":"x","params":{"pad":"xx', (True, 17)),
        (b' {"id" : "a\\"b" ,', (True, 'a"b')),
        (b'{"id":null,"method"', (True, None)),
        (b'{"method":"m","params":{"a":"}]\\"","b":[{"c":1}]},"id":3}', (True, 3)),
        (b'{"params":{"a":"}]"},"id":[1]}', (False, None)),  # not a valid id
        (b'{"id":12', (False, None)),  # cut: 12 may be the start of 1234
        (b'{"id":"abc', (False, None)),
        (b'{"id":1e400,', (False, None)),
        (b'{"id":1.5,', (False, None)),
        (b'{"id":true,', (False, None)),
        (b'{"id":"\\ud800",', (False, None)),  # a lone surrogate: no reply can echo it
        (b'{"jsonrpc":"2.0","params":{"pad":"xxxx', (False, None)),  # id after the head
        (b'[{"id":1},{"id":2}]', (False, None)),  # a batch
        (b"not json", (False, None)),
        (b"", (False, None)),
        (b'{"a":' + b"[" * 5000, (False, None)),
    ],
)
def test_leading_id_reads_a_whole_valid_id_before_the_heads_end(
    head: bytes, found: tuple[bool, object]
) -> None:
    assert leading_id(head) == found


# Encoding


def test_encode_ndjson_appends_one_newline() -> None:
    assert encode_frame(Framing.NDJSON, PING) == PING + b"\n"


def test_encode_content_length_counts_bytes() -> None:
    body = '{"t":"ключ"}'.encode()
    assert encode_frame(Framing.CONTENT_LENGTH, body) == b"Content-Length: 16\r\n\r\n" + body
    assert len(body) == 16 != len(body.decode())


def test_encoded_frames_decode_back() -> None:
    for framing in Framing:
        decoder = FrameDecoder()
        decoder.feed(encode_frame(framing, PING) * 3)
        assert frames_of(decoder) == [PING] * 3


@pytest.mark.parametrize("cut", [0, 1, 60, 66, 67])
def test_an_ndjson_line_counts_its_trailing_blanks_however_it_is_cut(cut: int) -> None:
    """Found by `make fuzz`: trailing blanks counted only while the newline was missing, so a
    line refused when cut before its newline was served when it arrived whole."""
    line = b"{" + b"a" * 61 + b"    \n"  # 62 bytes of JSON, 66 with the blanks
    decoder = FrameDecoder(64)
    decoder.feed(line[:cut])
    refused = 0
    for chunk in (b"", line[cut:]):
        decoder.feed(chunk)
        try:
            assert decoder.next_frame() is None
        except FrameTooLarge:
            refused += 1
    assert refused == 1
