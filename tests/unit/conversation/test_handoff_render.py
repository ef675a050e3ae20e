"""What `alp handoff`, `alp inbox confirm` and `alp thread show` say about a handoff: where
the daemon's answer says it went (`path`), not a guess."""

from __future__ import annotations

from typing import Any

from alpctl.handoff_render import confirmed, handoff_line, sent


def _handoff(**fields: Any) -> dict[str, Any]:
    return {
        "id": "handoff_1",
        "sourceThreadId": "thread_s",
        "targetThreadId": "thread_t",
        "targetTitle": "build",
        "summary": "new numbers",
        "directive": False,
        "chainId": "chain_1",
        "hop": 1,
        "status": "sent",
        "sentAt": "2026-12-01T00:00:00.000Z",
        "path": "queue",
        **fields,
    }


def test_a_handoff_routed_to_the_running_root_says_it_is_taken_mid_run() -> None:
    text = sent({"handoff": _handoff(path="inject")})
    assert text.startswith("handoff_1: build is busy; its running root takes it mid-run")
    assert "queued" not in text


def test_a_handoff_queued_behind_a_busy_root_says_queued() -> None:
    assert sent({"handoff": _handoff()}) == (
        "handoff_1: queued for build's next round (build is busy)"
    )


def test_a_handoff_already_taken_names_the_run_that_took_it() -> None:
    taken = _handoff(path="inject", deliveredAt="2026-12-01T00:00:01.000Z",
                     deliveredExecutionId="exec_9")  # fmt: skip
    assert sent({"handoff": taken}) == "handoff_1: delivered into exec_9 of build (taken mid-run)"


def test_a_handoff_that_woke_its_thread_names_the_root() -> None:
    woke = {"handoff": _handoff(path="wake"), "execution": {"id": "exec_2"}}
    assert sent(woke) == "handoff_1: woke build; exec_2 (push) reads it"


def test_a_confirmed_directive_routed_to_the_running_root_says_so() -> None:
    item = _handoff(status="confirmed", directive=True, path="inject")
    assert confirmed({"item": item}).startswith(
        "handoff_1: confirmed; build is busy; its running root takes it mid-run"
    )
    assert confirmed({"item": {**item, "path": "queue"}}) == (
        "handoff_1: confirmed; queued for build's next round (build is busy)"
    )


def test_thread_show_tells_a_handoff_waiting_for_the_hook_from_one_taken() -> None:
    waiting = handoff_line(_handoff(path="inject"))
    assert "sent, waiting for its running root to take it mid-run" in waiting
    taken = handoff_line(_handoff(path="inject", deliveredAt="2026-12-01T00:00:01.000Z",
                                  deliveredExecutionId="exec_9"))  # fmt: skip
    assert "delivered, taken mid-run → exec_9" in taken
    assert "sent, queued for its next round" in handoff_line(_handoff())
