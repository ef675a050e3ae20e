"""Handoffs on a real alpd: sent from a shell or from inside a run, delivered by the
target's state (an idle thread is woken, a busy one reads it in its next round), recorded on
both threads, capped, secret-filtered, with artifacts fingerprinted in place; a directive
waits in the inbox for the person; ping-pong between two agents stops at the hop bound."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from daemons import StartAlpd, roots
from handoff_threads import (
    blocker,
    call,
    handoff,
    handoff_config,
    prompt_of,
    settled,
    show,
    thread,
)
from polling import wait_for

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

pytestmark = pytest.mark.both_stores


@pytest.fixture
def d(start_alpd: StartAlpd, work: Path) -> DaemonProcess:
    return start_alpd(handoff_config(work))


def test_a_handoff_wakes_an_idle_thread_whose_run_reads_it_under_its_envelope(
    d: DaemonProcess, work: Path
) -> None:
    research = thread(d, work, "research")
    build = thread(d, work, "build")
    sent = handoff(d, "build", "Verdict: FTS5 beats Tantivy here.", **{"from": "research"})
    h, woken = sent["handoff"], sent["execution"]
    assert (h["sourceThreadId"], h["targetThreadId"]) == (research, build)
    assert (h["status"], h["path"], h["hop"], h["directive"]) == ("sent", "wake", 1, False)
    assert woken["kind"] == "push" and woken["agent"] == "watch"
    assert woken["origin"]["handoffId"] == h["id"] and woken["origin"]["door"] == "cli"
    envelope, text = prompt_of(d, work, woken["id"]).split("\n", 1)
    assert envelope.startswith('[alp · handoff from thread "research"')
    assert "context from your own sessions" in envelope and "not instructions" in envelope
    assert research not in envelope  # named by its title, never its id
    assert text == "> Verdict: FTS5 beats Tantivy here."
    wait_for(lambda: settled(d, build))
    into, out = show(d, build)["handoffsIn"], show(d, research)["handoffsOut"]
    assert [x["id"] for x in into] == [x["id"] for x in out] == [h["id"]]
    assert into[0]["deliveredExecutionId"] == woken["id"] and into[0]["deliveredAt"]
    assert into[0]["sourceTitle"] == "research" and into[0]["targetTitle"] == "build"
    # (an empty list is left out of the result)
    assert "handoffsIn" not in show(d, research) and "handoffsOut" not in show(d, build)


def test_a_handoff_to_a_busy_thread_is_read_in_its_next_round(d: DaemonProcess, work: Path) -> None:
    thread(d, work, "research")
    build = thread(d, work, "build")
    busy = blocker(d, work, build)
    sent = handoff(d, build, "first", **{"from": "research"})
    second = handoff(d, build, "second", **{"from": "research"})
    assert sent["handoff"]["path"] == second["handoff"]["path"] == "queue"
    assert "execution" not in sent and len(roots(d, build)) == 2
    (work / "release").touch()
    wait_for(lambda: len(roots(d, build)) == 3, what="the round after the busy root")
    round_ = roots(d, build)[-1]
    assert round_["id"] != busy
    parts = prompt_of(d, work, round_["id"]).split("\n\n")
    assert [p.split("\n", 1)[1] for p in parts] == ["> first", "> second"]
    delivered = show(d, build)["handoffsIn"]
    assert {x["deliveredExecutionId"] for x in delivered} == {round_["id"]}
    assert {x["path"] for x in delivered} == {"queue"}


def test_a_title_names_one_thread_or_the_error_lists_the_candidates(
    d: DaemonProcess, work: Path
) -> None:
    thread(d, work, "research")
    call(d, "thread/create", {"title": "build api", "cwd": str(work)})
    call(d, "thread/create", {"title": "build api", "cwd": str(work)})
    with pytest.raises(RpcError) as ambiguous:
        handoff(d, "build api", "x", **{"from": "research"})
    assert ambiguous.value.name == "THREAD_AMBIGUOUS"
    assert len(ambiguous.value.data["candidates"]) == 2
    with pytest.raises(RpcError) as missing:
        handoff(d, "build", "x", **{"from": "research"})
    assert missing.value.name == "THREAD_NOT_FOUND"
    assert [c["title"] for c in missing.value.data["candidates"]] == ["build api"] * 2
    assert "build api" in missing.value.message


def test_the_summary_is_capped_refused_with_its_size_and_secret_filtered(
    d: DaemonProcess, work: Path
) -> None:
    thread(d, work, "research")
    build = thread(d, work, "build")
    with pytest.raises(RpcError) as big:
        handoff(d, build, "é" * 2049, **{"from": "research"})
    assert big.value.name == "HANDOFF_TOO_LARGE" and big.value.code == 1026
    assert big.value.data["size"] == 4098 and big.value.data["limit"] == 4096
    assert "handoffsIn" not in show(d, build)
    secret = "AKIA" + "IOSFODNN7EXAMPLE"
    sent = handoff(d, build, f"the key is {secret}", **{"from": "research"})
    assert secret not in sent["handoff"]["summary"]
    assert secret not in prompt_of(d, work, sent["execution"]["id"])


def test_artifacts_are_recorded_in_place_with_size_and_sha256(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    thread(d, work, "research")
    build = thread(d, work, "build")
    report = work / "bench.md"
    report.write_bytes(b"| fts5 | 1.2 ms |\n")
    sent = handoff(d, build, "see the table", artifacts=[str(report)], **{"from": "research"})
    expected = {"path": str(report.resolve()), "size": 18,
                "sha256": hashlib.sha256(report.read_bytes()).hexdigest()}  # fmt: skip
    assert sent["handoff"]["artifacts"] == [expected]
    text = prompt_of(d, work, sent["execution"]["id"])
    assert f"- {expected['path']} (18 bytes, sha256 {expected['sha256']})" in text
    outside = tmp_path / "secret.txt"
    outside.write_text("not yours to send")
    with pytest.raises(RpcError) as refused:
        handoff(d, build, "x", artifacts=[str(outside)], **{"from": "research"})
    assert refused.value.name == "INVALID_ARGUMENT" and str(outside) in refused.value.message


def test_denied_routes_name_their_reason(d: DaemonProcess, work: Path) -> None:
    research = thread(d, work, "research")
    build = thread(d, work, "build")
    with pytest.raises(RpcError) as to_itself:
        handoff(d, research, "x", **{"from": research})
    assert to_itself.value.name == "HANDOFF_DENIED" and to_itself.value.data["reason"] == "self"
    call(d, "thread/close", {"threadId": build})
    with pytest.raises(RpcError) as closed:
        handoff(d, build, "x", **{"from": research})
    assert closed.value.data["reason"] == "closed"
    with pytest.raises(RpcError) as no_source:
        handoff(d, research, "x")
    assert no_source.value.name == "PIN_OUTSIDE_EXECUTION" and "--from" in no_source.value.message


def test_a_directive_waits_in_the_inbox_until_the_person_confirms_it(
    d: DaemonProcess, work: Path
) -> None:
    thread(d, work, "monitor")
    trading = thread(d, work, "trading")
    held = handoff(d, "trading", "Sell at 42: threshold broke", directive=True,
                   **{"from": "monitor"})["handoff"]  # fmt: skip
    assert (held["status"], held["path"]) == ("inbox", "inbox")
    assert len(roots(d, trading)) == 1  # not woken
    listed = call(d, "inbox/list", {})["items"]
    assert [i["id"] for i in listed] == [held["id"]]
    assert call(d, "inbox/list", {"thread": "monitor"})["items"] == []
    done = call(d, "inbox/confirm", {"id": held["id"]})
    assert done["item"]["status"] == "confirmed" and done["item"]["decidedAt"]
    envelope, text = prompt_of(d, work, done["execution"]["id"]).split("\n", 1)
    assert envelope.startswith('[alp · confirmed handoff from thread "monitor"')
    assert "their own words" in envelope and text == "> Sell at 42: threshold broke"
    assert call(d, "inbox/list", {})["items"] == []
    with pytest.raises(RpcError) as again:
        call(d, "inbox/confirm", {"id": held["id"]})
    assert again.value.name == "INBOX_ITEM_NOT_FOUND" and "confirmed" in again.value.message
    dropped = handoff(d, "trading", "buy", directive=True, **{"from": "monitor"})["handoff"]
    assert call(d, "inbox/dismiss", {"id": dropped["id"]})["status"] == "dismissed"
    with pytest.raises(RpcError) as unknown:
        call(d, "inbox/dismiss", {"id": "handoff_nope"})
    assert unknown.value.name == "INBOX_ITEM_NOT_FOUND" and unknown.value.code == 1027
    wait_for(lambda: settled(d, trading))
    statuses = [x["status"] for x in show(d, trading)["handoffsIn"]]
    assert statuses == ["confirmed", "dismissed"]


def test_ping_pong_between_two_agents_stops_at_the_hop_bound(d: DaemonProcess, work: Path) -> None:
    ping = thread(d, work, "ping", agent="relay")
    pong = thread(d, work, "pong", agent="relay")
    # ping -> pong (hop 1), pong replies (2), ping replies (3), pong's reply is a loop.
    first = handoff(d, "pong", "ping?", **{"from": "ping"})["handoff"]
    chain = first["chainId"]

    def hops() -> list[int]:
        sent = show(d, ping).get("handoffsOut", []) + show(d, pong).get("handoffsOut", [])
        return sorted(x["hop"] for x in sent if x["chainId"] == chain)

    log = work / "relay.log"
    # Four runs one after another, each starting `alp`: generous on a loaded machine.
    wait_for(lambda: log.exists() and "HANDOFF_LOOP" in log.read_text(), 180, what="the 4th hop")
    wait_for(lambda: settled(d, ping) and settled(d, pong))
    assert hops() == [1, 2, 3]
    text = log.read_text()
    assert text.count("exit 0") == 2 and text.count("exit 1") == 1, text


def test_deliveries_and_the_inbox_are_announced_to_subscribers(
    d: DaemonProcess, work: Path
) -> None:
    thread(d, work, "monitor")
    trading = thread(d, work, "trading")
    with d.client() as events:
        events.call("events/subscribe", {"events": ["handoff/delivered", "inbox/changed",
                                                    "thread/report"]})  # fmt: skip
        notes = events.notifications()
        woke = handoff(d, trading, "fyi: volume is up", **{"from": "monitor"})
        delivered = next(notes)
        assert delivered["method"] == "handoff/delivered"
        assert delivered["params"]["handoff"]["id"] == woke["handoff"]["id"]
        assert delivered["params"]["handoff"]["deliveredExecutionId"] == woke["execution"]["id"]
        report = next(notes)  # the woken run's report is announced: the person is told
        assert report["method"] == "thread/report"
        assert report["params"]["report"]["executionId"] == woke["execution"]["id"]
        held = handoff(d, trading, "sell", directive=True, **{"from": "monitor"})["handoff"]
        added = next(notes)
        assert (added["method"], added["params"]["change"]) == ("inbox/changed", "added")
        assert added["params"]["item"]["id"] == held["id"]
        call(d, "inbox/confirm", {"id": held["id"]})
        seen = {(n["method"], n["params"].get("change")) for n in (next(notes), next(notes))}
        assert seen == {("handoff/delivered", None), ("inbox/changed", "confirmed")}


def test_alp_handoff_and_alp_inbox_on_the_command_line(d: DaemonProcess, work: Path) -> None:
    thread(d, work, "research")
    build = thread(d, work, "build")
    (work / "notes.md").write_text("numbers\n")
    sent = d.cli("handoff", "build", "--from", "research", "--artifact", "notes.md", "--",
                 "use", "the", "numbers", cwd=str(work))  # fmt: skip
    assert sent.returncode == 0, sent.stderr
    assert "woke build" in sent.stdout and "(push) reads it" in sent.stdout
    [h] = show(d, build)["handoffsIn"]
    assert h["summary"] == "use the numbers"
    assert h["artifacts"][0]["path"] == str((work / "notes.md").resolve())
    piped = d.cli("handoff", "build", "--from", "research", "--directive", "--json",
                  input="run the migration\n")  # fmt: skip
    assert piped.returncode == 0, piped.stderr
    item = json.loads(piped.stdout)["handoff"]
    assert item["status"] == "inbox" and item["summary"] == "run the migration"
    listed = d.cli("inbox")
    assert listed.returncode == 0 and item["id"] in listed.stdout
    assert "run the migration" in listed.stdout and "for build" in listed.stdout
    too_big = d.cli("handoff", "build", "--from", "research", "--", "x" * 5000)
    assert too_big.returncode == 1 and "HANDOFF_TOO_LARGE" in too_big.stderr
    assert "5000 bytes" in too_big.stderr
    assert d.cli("inbox", "confirm").returncode == 2
    dismissed = d.cli("inbox", "dismiss", item["id"])
    assert dismissed.returncode == 0 and "dismissed" in dismissed.stdout
    assert d.cli("inbox").stdout.strip() == "your inbox is empty"
    assert "--directive" in d.cli("handoff", "--help").stdout
