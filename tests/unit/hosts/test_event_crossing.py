"""What crosses hosts and the NOTIFY payload that carries it (alpd/domain/hosts/crossing.py):
every reference reads back as written and fits PostgreSQL's 8000 bytes, anything else on the
channel reads as nothing, a row that is gone never crosses, and a role's channel is always a
name PostgreSQL accepts."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from alpd.background.event_relay import INBOX, OUTBOX, EventRelay
from alpd.clock import Clock
from alpd.domain.hosts.crossing import (
    CROSSING,
    MAX_PAYLOAD,
    Reference,
    channel_for,
    decode,
    encode,
    reference_of,
    stamped,
)
from alpd.events import EventBus
from alpd.services.context import Daemon

ids = st.text(min_size=1, max_size=80)
references = st.builds(
    Reference,
    host=ids,
    seq=st.integers(min_value=0, max_value=2**53),
    method=st.sampled_from(sorted(CROSSING)),
    id=ids,
    change=st.none() | st.sampled_from(["created", "reserved", "settled", "added"]),
    thread_id=st.none() | ids,
)


@given(references)
def test_a_reference_reads_back_as_written_and_fits_a_notify(reference: Reference) -> None:
    payload = encode(reference)
    assert payload is not None and len(payload.encode()) <= MAX_PAYLOAD
    assert decode(payload) == reference


@given(references, st.integers(min_value=1, max_value=2**63 - 1))
def test_a_stamped_reference_carries_its_number_in_the_log_and_still_fits(
    reference: Reference, logged: int
) -> None:
    payload = encode(reference)
    assert payload is not None
    told = stamped(payload, logged)
    assert len(told.encode()) <= MAX_PAYLOAD
    assert decode(told) == dataclasses.replace(reference, logged=logged)
    # read back from the log: the row's number, the payload as kept
    assert decode(payload, logged=logged) == decode(told)


def test_the_longest_reference_sent_still_fits_once_stamped() -> None:
    base = encode(Reference("h", 1, "thread/changed", "", "created", None))
    assert base is not None
    longest = Reference("h", 1, "thread/changed", "x" * (MAX_PAYLOAD - len(base)), "created", None)
    while encode(longest) is None:
        longest = dataclasses.replace(longest, id=longest.id[:-1])
    payload = encode(longest)
    assert payload is not None
    assert len(stamped(payload, 2**63 - 1).encode()) <= MAX_PAYLOAD


@given(st.text(max_size=300) | st.from_regex(r'\{"h":.*\}', fullmatch=True))
def test_anything_else_on_the_channel_reads_as_nothing_or_a_reference(payload: str) -> None:
    read = decode(payload)
    assert read is None or read.method in CROSSING


def test_a_too_long_reference_is_not_sent() -> None:
    long = Reference("h", 1, "thread/changed", "x" * MAX_PAYLOAD, "created", None)
    assert encode(long) is None


@pytest.mark.parametrize(
    ("method", "params", "expected"),
    [
        ("thread/changed", {"thread": {"id": "t1"}, "change": "created"}, ("t1", "created", "t1")),
        (
            "execution/changed",
            {"execution": {"id": "e1", "threadId": "t1"}, "change": "settled"},
            ("e1", "settled", "t1"),
        ),
        ("thread/report", {"report": {"id": 7, "threadId": "t1"}}, ("7", None, "t1")),
        (
            "handoff/delivered",
            {"handoff": {"id": "h1", "targetThreadId": "t2"}},
            ("h1", None, "t2"),
        ),
        (
            "inbox/changed",
            {"item": {"id": "h1", "targetThreadId": "t2"}, "change": "added"},
            ("h1", "added", "t2"),
        ),
        (
            "schedule/changed",
            {"schedule": {"id": "s1", "threadId": "t1"}, "change": "fired"},
            ("s1", "fired", "t1"),
        ),
    ],
)
def test_each_crossing_notification_is_told_by_its_row(
    method: str, params: dict[str, Any], expected: tuple[str, str | None, str | None]
) -> None:
    reference = reference_of("alpd_1", 3, method, params)
    assert reference is not None
    assert (reference.id, reference.change, reference.thread_id) == expected
    assert (reference.host, reference.seq, reference.method) == ("alpd_1", 3, method)


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("history/progress", {"threadId": "t1"}),  # about this host's own files
        ("budget/warning", {"threadId": "t1"}),  # told by the host that enforces it
        ("schedule/changed", {"schedule": {"id": "s1"}, "change": "deleted"}),  # no row left
        ("inbox/changed", {"proposal": {"id": "p1"}, "change": "added"}),  # not a handoff
        ("thread/changed", {"thread": {"id": True}, "change": "created"}),
        ("thread/changed", ["not", "params"]),
    ],
)
def test_what_does_not_cross(method: str, params: Any) -> None:
    assert reference_of("alpd_1", 1, method, params) is None


def test_a_deleted_schedule_read_off_the_channel_is_nothing() -> None:
    told = '{"h":"a","n":1,"m":"schedule/changed","i":"s1","c":"deleted","t":null}'
    assert decode(told) is None


@given(st.text(min_size=1, max_size=200))
def test_a_roles_channel_is_a_name_postgresql_accepts(role: str) -> None:
    channel = channel_for(role, "0" * 64)
    assert channel.startswith("alp:") and len(channel.encode()) <= 63
    assert channel == f"alp:{role}" or len(f"alp:{role}".encode()) > 63


def _relay() -> Any:
    daemon = Daemon(store=None, events=EventBus(), clock=Clock(), uid=1000)  # type: ignore[arg-type]
    return EventRelay(SimpleNamespace(d=daemon), None, "alpd_me")  # type: ignore[arg-type]


def test_the_relays_queues_are_bounded_and_never_wait() -> None:
    relay = _relay()
    frame = (
        b'{"jsonrpc":"2.0","method":"thread/changed","params":{"thread":{"id":"t1"},"change":"c"}}'
    )
    for _ in range(OUTBOX + 5):
        relay.forward("thread/changed", frame)
    assert relay.dropped_out == 5
    relay.forward("history/progress", frame)  # does not cross: not queued, not counted
    assert relay.dropped_out == 5
    # heard: its own are skipped, another's only when a local subscriber wants them
    mine = encode(Reference("alpd_me", 1, "thread/changed", "t1", "c", "t1"))
    theirs = encode(Reference("alpd_other", 1, "thread/changed", "t1", "c", "t1"))
    assert mine is not None and theirs is not None
    relay._heard(theirs)
    assert relay._in.statistics().current_buffer_used == 0  # nobody subscribed
    relay.d.events.wanted = lambda method, thread_id: True
    relay._heard(mine)
    assert relay._in.statistics().current_buffer_used == 0
    for _ in range(INBOX + 3):
        relay._heard(theirs)
    assert relay.dropped_in == 3


def test_a_replay_hears_what_was_missed_once_in_order_and_at_most_replay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import anyio

    from alpd.background import event_relay
    from alpd.store.postgres import notify

    logged = {
        n: encode(Reference("alpd_other", n, "thread/changed", f"t{n}", "c", f"t{n}"))
        for n in range(1, event_relay.REPLAY + 40)
    }

    async def missed_since(store: Any, seq: int, most: int) -> list[tuple[int, str]]:
        after = sorted(n for n in logged if n > seq)[-(most + 1) :]
        return [(n, str(logged[n])) for n in after]

    monkeypatch.setattr(notify, "missed_since", missed_since)
    relay = _relay()
    relay.d.events.wanted = lambda method, thread_id: True
    relay.last_logged = len(logged) - 10
    anyio.run(relay._replay)
    # the ten missed, oldest first; NOTIFYed again after the LISTEN began: not heard twice
    for n in (len(logged) - 1, len(logged)):
        payload = logged[n]
        assert payload is not None
        relay._heard(stamped(payload, n))
    heard = [relay._in.receive_nowait().logged for _ in range(10)]
    assert heard == list(range(len(logged) - 9, len(logged) + 1))
    assert relay._in.statistics().current_buffer_used == 0
    assert (relay.replayed, relay.not_replayed) == (10, 0)
    # more missed than REPLAY: the newest REPLAY, the oldest left out and said so
    relay.last_logged = 0
    logged.update(
        {
            n: encode(Reference("alpd_other", n, "thread/changed", f"t{n}", "c", f"t{n}"))
            for n in range(len(logged) + 1, len(logged) + 20)
        }
    )
    anyio.run(relay._replay)
    heard = [relay._in.receive_nowait().logged for _ in range(event_relay.REPLAY)]
    assert heard == sorted(logged)[-event_relay.REPLAY :]
    assert relay.not_replayed == 1 and relay.last_logged == max(logged)
