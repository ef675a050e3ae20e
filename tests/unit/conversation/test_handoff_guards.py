"""The handoff loop guards as a pure state machine.

A hypothesis rule-based machine plays threads that send, reply to what woke them, see their
deliveries succeed or fail, lose their daemon mid-send (a crash abandons the reservations in
flight), and live through clock jumps both ways. After every admission it checks, against a
record of its own rather than the guards' state, that no hop exceeds the bound, that a reply
inside the quiet time continues its chain, that the quota holds, and that a refusal was due.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from alpd.domain.conversation.guards import (
    ChainLink,
    GuardLimits,
    Slot,
    admit,
    check_route,
    is_live,
)
from alpd.errors import HandoffDenied, HandoffLoop, HandoffRateLimited

THREADS = ("research", "build", "ops")
LIMITS = GuardLimits(
    hop_bound=3,
    chain_quiet_seconds=600,
    pair_quota=4,
    pair_window_seconds=600,
    reservation_seconds=60,
)
JUMPS = st.one_of(
    st.floats(min_value=0, max_value=90, allow_nan=False),
    st.sampled_from([-3600.0, -120.0, -1.0, 59.0, 60.0, 599.0, 600.0, 601.0, 3600.0]),
)


@dataclass
class Sent:
    id: str
    pair: tuple[str, str]
    at: float
    holder: str
    chain_id: str
    hop: int
    #: None while in flight (or abandoned), then "committed", "released" or "expired"
    end: str | None = None


class Guards(RuleBasedStateMachine):
    @initialize(limits=st.just(LIMITS))
    def start(self, limits: GuardLimits) -> None:
        self.limits = limits
        self.now = 1_800_000_000.0
        self.holder = "alpd-0"
        self.crashes = 0
        self.monotone = True
        #: the store: what the service would have in SQLite
        self.slots: dict[tuple[str, str], list[Slot]] = {}
        self.chain_last: dict[str, float] = {}
        #: the record the checks use
        self.sent: list[Sent] = []
        self.counter = 0

    # helpers

    def _new_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def _in_flight(self) -> list[Sent]:
        return [s for s in self.sent if s.end is None and s.holder == self.holder]

    def _delivered(self) -> list[Sent]:
        return [s for s in self.sent if s.end == "committed"]

    def _expected_live(self, pair: tuple[str, str]) -> int:
        """The quota count from the record: delivered and inside the window, or in flight
        (held by the running daemon, or abandoned less than the reservation time ago)."""
        count = 0
        for s in self.sent:
            if s.pair != pair:
                continue
            age = max(0.0, self.now - s.at)
            if (s.end == "committed" and age < self.limits.pair_window_seconds) or (
                s.end is None and (s.holder == self.holder or age < self.limits.reservation_seconds)
            ):
                count += 1
        return count

    def _send(self, source: str, target: str, link: ChainLink | None) -> None:
        pair = (source, target)
        slots = self.slots.setdefault(pair, [])
        expected = self._expected_live(pair)
        fresh = link is not None and max(0.0, self.now - link.last_at) < (
            self.limits.chain_quiet_seconds
        )
        try:
            admission = admit(
                self.limits,
                now=self.now,
                holder=self.holder,
                slots=slots,
                link=link,
                new_chain_id=self._new_id("chain"),
            )
        except HandoffLoop as exc:
            assert fresh and link is not None and link.hop + 1 > self.limits.hop_bound
            assert exc.data["hop"] == link.hop + 1
            assert exc.data["hopBound"] == self.limits.hop_bound
            return
        except HandoffRateLimited as exc:
            assert expected >= self.limits.pair_quota, "refused below the quota"
            assert exc.data["retryAfterSeconds"] >= 0
            assert exc.data["quota"] == self.limits.pair_quota
            return
        assert expected < self.limits.pair_quota, "admitted over the quota"
        assert 1 <= admission.hop <= self.limits.hop_bound
        if fresh and link is not None:
            assert (admission.chain_id, admission.hop) == (link.chain_id, link.hop + 1)
            assert not admission.new_chain
        else:
            assert admission.new_chain and admission.hop == 1
        # write what the service writes in the same transaction
        expired = set(admission.expired_reservations)
        for s in self.sent:
            if s.id in expired:
                assert s.end is None and s.holder != self.holder
                assert self.now - s.at >= self.limits.reservation_seconds
                s.end = "expired"
        slots[:] = [replace(x, state="released") if x.id in expired else x for x in slots]
        slot_id = self._new_id("handoff")
        slots.append(Slot(slot_id, self.now, "reserved", self.holder))
        self.chain_last[admission.chain_id] = max(
            self.chain_last.get(admission.chain_id, self.now), self.now
        )
        self.sent.append(
            Sent(slot_id, pair, self.now, self.holder, admission.chain_id, admission.hop)
        )

    def _finish(self, sent: Sent, end: str) -> None:
        sent.end = end
        slots = self.slots[sent.pair]
        slots[:] = [replace(x, state=end) if x.id == sent.id else x for x in slots]  # type: ignore[arg-type]

    # rules

    @rule(source=st.sampled_from(THREADS), to=st.sampled_from(THREADS))
    def send(self, source: str, to: str) -> None:
        """A person, or a run nothing woke: a new chain."""
        if source != to:
            self._send(source, to, None)

    @precondition(lambda self: bool(self._delivered()))
    @rule(data=st.data())
    def reply(self, data: st.DataObject) -> None:
        """A run woken by a delivered handoff sends on (back, or to a third thread)."""
        woke = data.draw(st.sampled_from(self._delivered()))
        source = woke.pair[1]
        target = data.draw(st.sampled_from([t for t in THREADS if t != source]))
        link = ChainLink(woke.chain_id, woke.hop, self.chain_last[woke.chain_id])
        self._send(source, target, link)

    @precondition(lambda self: bool(self._in_flight()))
    @rule(data=st.data(), delivered=st.booleans())
    def finish(self, data: st.DataObject, delivered: bool) -> None:
        """A delivery succeeds (the slot is committed) or fails (released)."""
        sent = data.draw(st.sampled_from(self._in_flight()))
        self._finish(sent, "committed" if delivered else "released")

    @rule()
    def crash(self) -> None:
        """alpd dies: what was in flight is abandoned (neither committed nor released)."""
        self.crashes += 1
        self.holder = f"alpd-{self.crashes}"

    @rule(seconds=JUMPS)
    def clock(self, seconds: float) -> None:
        self.now += seconds
        self.monotone = self.monotone and seconds >= 0

    # invariants

    @invariant()
    def hops_stay_within_the_bound(self) -> None:
        assert all(1 <= s.hop <= self.limits.hop_bound for s in self.sent)

    @invariant()
    def the_store_counts_what_the_record_counts(self) -> None:
        for pair, slots in self.slots.items():
            live = sum(is_live(s, self.limits, now=self.now, holder=self.holder) for s in slots)
            assert live == self._expected_live(pair)

    @invariant()
    def no_window_holds_more_than_the_quota(self) -> None:
        """On a clock that never went back: in every window, at most `pair_quota` sends of a
        pair that were delivered or are still being delivered by the running daemon."""
        if not self.monotone:
            return
        for pair in self.slots:
            counted = [
                s.at
                for s in self.sent
                if s.pair == pair
                and (s.end == "committed" or (s.end is None and s.holder == self.holder))
            ]
            for start in counted:
                end = start + self.limits.pair_window_seconds
                inside = [t for t in counted if start <= t < end]
                assert len(inside) <= self.limits.pair_quota


Guards.TestCase.settings = settings(max_examples=300, stateful_step_count=60, deadline=None)
test_guards_never_exceed_the_hop_bound_or_the_quota = Guards.TestCase


def test_a_fourth_link_of_a_chain_is_a_loop() -> None:
    at = 1000.0
    link = ChainLink("chain1", 3, at)
    with pytest.raises(HandoffLoop) as refused:
        admit(LIMITS, now=at + 1, holder="h", slots=[], link=link, new_chain_id="chain2")
    assert refused.value.data == {
        "chainId": "chain1",
        "hop": 4,
        "hopBound": 3,
        "quietSeconds": 600,
    }


def test_a_quiet_chain_expires_and_the_next_message_starts_a_new_one() -> None:
    link = ChainLink("chain1", 3, 1000.0)
    admission = admit(LIMITS, now=1600.0, holder="h", slots=[], link=link, new_chain_id="c2")
    assert (admission.chain_id, admission.hop, admission.new_chain) == ("c2", 1, True)
    almost = admit(
        LIMITS, now=1599.0, holder="h", slots=[], link=ChainLink("c", 2, 1000.0), new_chain_id="x"
    )
    assert (almost.chain_id, almost.hop) == ("c", 3)


def test_a_full_pair_is_rate_limited_until_its_oldest_slot_leaves_the_window() -> None:
    slots = [Slot(f"s{i}", 1000.0 + i * 10, "committed", "h") for i in range(4)]
    with pytest.raises(HandoffRateLimited) as refused:
        admit(LIMITS, now=1100.0, holder="h", slots=slots, link=None, new_chain_id="c")
    assert refused.value.data["retryAfterSeconds"] == 500.0
    assert refused.value.data["inWindow"] == 4
    assert admit(LIMITS, now=1600.0, holder="h", slots=slots, link=None, new_chain_id="c").hop == 1


def test_a_released_slot_is_not_burnt_and_an_abandoned_one_expires() -> None:
    released = [Slot(f"s{i}", 1000.0, "released", "h") for i in range(10)]
    assert admit(LIMITS, now=1001.0, holder="h", slots=released, link=None, new_chain_id="c")
    abandoned = [Slot(f"s{i}", 1000.0, "reserved", "dead") for i in range(4)]
    with pytest.raises(HandoffRateLimited) as refused:
        admit(LIMITS, now=1059.0, holder="h", slots=abandoned, link=None, new_chain_id="c")
    assert refused.value.data["retryAfterSeconds"] == 1.0
    admission = admit(LIMITS, now=1060.0, holder="h", slots=abandoned, link=None, new_chain_id="c")
    assert admission.expired_reservations == ("s0", "s1", "s2", "s3")
    held = [Slot(f"s{i}", 1000.0, "reserved", "h") for i in range(4)]
    with pytest.raises(HandoffRateLimited):
        admit(LIMITS, now=5000.0, holder="h", slots=held, link=None, new_chain_id="c")


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"source_owner": 65534}, "other-owner"),
        ({"target_owner": 65534}, "other-owner"),
        ({"caller_uid": 65534}, "other-owner"),
        ({"target_id": "thread_a"}, "self"),
        ({"target_status": "closed"}, "closed"),
        ({"target_status": "archived"}, "closed"),
    ],
)
def test_a_route_to_another_user_itself_or_a_closed_thread_is_denied(
    change: dict[str, object], reason: str
) -> None:
    route: dict[str, object] = {
        "caller_uid": 1000,
        "source_id": "thread_a",
        "source_owner": 1000,
        "target_id": "thread_b",
        "target_owner": 1000,
        "target_status": "open",
    }
    check_route(**route)  # type: ignore[arg-type]
    with pytest.raises(HandoffDenied) as denied:
        check_route(**{**route, **change})  # type: ignore[arg-type]
    assert denied.value.data["reason"] == reason
