"""Loop guards for handoffs between threads: pure rules over plain data, time a parameter.

Pushes sent from inside a run (`thread/push` whose caller is an execution) obey the same rules
(`HandoffService.push_guard`): a ring of runs pushing to each other is a loop like any other
(one ran 440 runs in 30 s). Such a push continues the chain of what reached its run, counts
against its pair's quota with the pair's handoffs, and is refused with the same names. A
push by a person, a script or an alert outside any run starts nothing and is not counted.

Agents that message each other generate loops; these rules are what stops them. The service
(`alpd.services.conversation.handoffs`) loads the rows these functions need inside ONE write
transaction,
calls them, and writes what they decide in the same transaction, so two simultaneous sends
can never both read "not full yet". The rules, in the order `admit` applies them:

1. **Route** (`check_route`): the caller, the source thread and the target thread have one
   owner, the source is not the target, the target is open. Otherwise `HANDOFF_DENIED`
   with `data.reason` = `other-owner`, `self` or `closed`. The delivery service checks the
   owner again on every path (wake, queue, inject) when it delivers.
2. **Hop bound**: a send made by a run that a handoff woke (or was injected into) continues
   that handoff's chain with hop + 1; any other send starts a new chain at hop 1. A hop above
   `hop_bound` (default 3: send, reply, one more reply) is `HANDOFF_LOOP`.
3. **Quiet chains expire**: a chain whose last send is `chain_quiet_seconds` old (default
   10 min) is over; the next message, even from a run it woke, starts a new chain at hop 1.
4. **Per-pair quota**: at most `pair_quota` sends (default 6) per ordered pair of threads in
   a rolling `pair_window_seconds` (default 10 min), else `HANDOFF_RATE_LIMITED` with the time
   a slot frees up. What counts against the quota is the pair's *live* slots:
   - a committed slot (its delivery succeeded) while it is inside the window;
   - a reserved slot (reserved before delivery, not yet committed or released) while the
     daemon instance that reserved it (its `holder`) is the running one — its sender always
     commits or releases it — or, for a holder that died (a crash between reserve and
     commit), until `reservation_seconds` (default 60 s) after it was reserved: an abandoned
     reservation expires instead of burning the slot forever;
   - a released slot (its delivery failed) never.
   Admission reserves a slot; `expired_reservations` names the abandoned ones to mark.

Clock jumps: every comparison treats a time in the future as "just now", so a clock set back
keeps slots and chains alive longer (the guards err on the side of refusing) and never lets
more sends through than the quota.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from alpd.errors import HandoffDenied, HandoffLoop, HandoffRateLimited

SlotState = Literal["reserved", "committed", "released"]
#: `from-a-run`: a run asked to confirm or dismiss an inbox item (the person's to decide)
DenyReason = Literal["other-owner", "self", "closed", "from-a-run"]

#: config.toml `[handoff]` keys and the field each sets
LIMIT_KEYS: Final = {
    "hopBound": "hop_bound",
    "chainQuietSeconds": "chain_quiet_seconds",
    "pairQuota": "pair_quota",
    "pairWindowSeconds": "pair_window_seconds",
    "reservationSeconds": "reservation_seconds",
}


@dataclass(frozen=True, slots=True)
class GuardLimits:
    """The guards' numbers (config.toml `[handoff]`; these are the defaults)."""

    hop_bound: int = 3
    chain_quiet_seconds: float = 600.0
    pair_quota: int = 6
    pair_window_seconds: float = 600.0
    reservation_seconds: float = 60.0


@dataclass(frozen=True, slots=True)
class Slot:
    """One send of an ordered pair of threads, as far as its quota is concerned."""

    id: str
    #: when it was reserved, in seconds since the epoch
    at: float
    state: SlotState
    #: the daemon instance that reserved it
    holder: str


@dataclass(frozen=True, slots=True)
class ChainLink:
    """The handoff that woke the sending run (or was injected into it): the chain it sends
    in, that handoff's hop, and the time of the chain's last send."""

    chain_id: str
    hop: int
    last_at: float


@dataclass(frozen=True, slots=True)
class Admission:
    chain_id: str
    hop: int
    new_chain: bool
    #: abandoned reservations of the pair, to be marked released
    expired_reservations: tuple[str, ...]


def _age(now: float, at: float) -> float:
    """Seconds since `at`; a time in the future (the clock was set back) is age 0."""
    return max(0.0, now - at)


def is_live(slot: Slot, limits: GuardLimits, *, now: float, holder: str) -> bool:
    """Does the slot count against its pair's quota at `now`?"""
    if slot.state == "committed":
        return _age(now, slot.at) < limits.pair_window_seconds
    if slot.state == "reserved":
        return slot.holder == holder or _age(now, slot.at) < limits.reservation_seconds
    return False


def frees_at(slot: Slot, limits: GuardLimits, *, holder: str) -> float:
    """When a live slot stops counting: an abandoned reservation when it expires; a
    committed slot, or a held reservation (at worst it commits), when it leaves the window."""
    if slot.state == "reserved" and slot.holder != holder:
        return slot.at + limits.reservation_seconds
    return slot.at + limits.pair_window_seconds


def check_route(
    *,
    caller_uid: int,
    source_id: str,
    source_owner: int,
    target_id: str,
    target_owner: int,
    target_status: str,
) -> None:
    """HANDOFF_DENIED unless one owner holds both threads, they differ, the target is open."""
    reason: DenyReason | None = None
    if not caller_uid == source_owner == target_owner:
        reason = "other-owner"
    elif source_id == target_id:
        reason = "self"
    elif target_status != "open":
        reason = "closed"
    if reason is None:
        return
    messages: dict[DenyReason, str] = {
        "other-owner": "a handoff goes only between threads of the same user",
        "self": "a thread cannot hand off to itself; pin it instead (`alp context pin`)",
        "closed": f"thread {target_id} is {target_status}; hand off to an open thread",
    }
    raise HandoffDenied(messages[reason], reason=reason, sourceId=source_id, targetId=target_id)


def admit(
    limits: GuardLimits,
    *,
    now: float,
    holder: str,
    slots: Sequence[Slot],
    link: ChainLink | None,
    new_chain_id: str,
) -> Admission:
    """Admit one send of a pair whose slots are `slots` (rules 2-4 of the module docstring);
    `link` is what woke the sender, `new_chain_id` the id a new chain takes."""
    if link is None or _age(now, link.last_at) >= limits.chain_quiet_seconds:
        chain_id, hop, new_chain = new_chain_id, 1, True
    else:
        chain_id, hop, new_chain = link.chain_id, link.hop + 1, False
    if hop > limits.hop_bound:
        raise HandoffLoop(
            f"this would be hop {hop} of a handoff chain (handoffs and pushes sent from runs); "
            f"at most {limits.hop_bound} hops (send, reply, one more reply) go between "
            "threads before a person steps in. "
            f"The chain expires after {limits.chain_quiet_seconds:g} s without a send",
            chainId=chain_id,
            hop=hop,
            hopBound=limits.hop_bound,
            quietSeconds=limits.chain_quiet_seconds,
        )
    live = [slot for slot in slots if is_live(slot, limits, now=now, holder=holder)]
    if len(live) >= limits.pair_quota:
        retry = max(now, min(frees_at(slot, limits, holder=holder) for slot in live))
        raise HandoffRateLimited(
            f"{len(live)} handoffs (or pushes from runs) between these threads in the last "
            f"{limits.pair_window_seconds:g} s; at most {limits.pair_quota}. Try again in "
            f"{retry - now:.0f} s",
            quota=limits.pair_quota,
            windowSeconds=limits.pair_window_seconds,
            inWindow=len(live),
            retryAfterSeconds=round(retry - now, 3),
        )
    expired = tuple(slot.id for slot in slots if slot.state == "reserved" and slot not in live)
    return Admission(chain_id, hop, new_chain, expired)


__all__ = [
    "LIMIT_KEYS",
    "Admission",
    "ChainLink",
    "DenyReason",
    "GuardLimits",
    "Slot",
    "SlotState",
    "admit",
    "check_route",
    "frees_at",
    "is_live",
]
