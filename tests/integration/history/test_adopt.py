"""`thread/adopt` on a real alpd: the real CLIs' sessions (tests/fixtures/runtimes), imported,
become a root of a new thread or of an idle one; the transcript reads their entries; adopting
twice, into a busy or closed thread, or what is not an import is refused by name; a continue
goes on from the adopted root (its context carries the adoption's outcome line, not the
session's text; the tail section carries the session's last exchange)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from daemons import StartAlpd, roots
from polling import wait_for
from transcripts import CLAUDE_COUNTS, CODEX_COUNTS, FIXTURES

from alpctl.client import RpcError
from alpd.domain.threads.session_context import TAIL_HEADING
from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.ctx]
runtime = "command"
args = ["sh", "-c", "cat \\"$ALP_SESSION_CONTEXT\\""]

[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat; echo done"]

[agents.slow]
runtime = "command"
args = ["sleep", "30"]
"""
CLAUDE_SESSION = "4a3bca85-6ad3-4d20-b8bb-637e07fbaa03"
CODEX_SESSION = "01a22af8-b7cc-7c33-825d-7962c4e1a179"


@pytest.fixture
def d(start_alpd: StartAlpd, tmp_path: Path) -> DaemonProcess:
    daemon = start_alpd(CONFIG)
    for runtime in ("claude", "codex"):
        target = tmp_path / f"{runtime}-sessions"
        shutil.copytree(FIXTURES / runtime, target)
        daemon.call("history/import", {"runtime": runtime, "path": str(target)})
    return daemon


def adopt(d: DaemonProcess, session: str, **params: Any) -> dict[str, Any]:
    result = d.call("thread/adopt", {"sessionId": session, **params})
    assert isinstance(result, dict)
    return result


def items(d: DaemonProcess, thread_id: str) -> list[dict[str, Any]]:
    page = d.call("thread/transcript", {"threadId": thread_id, "after": "", "limit": 500})
    assert isinstance(page, dict)
    return list(page["items"])


def refused(d: DaemonProcess, session: str, **params: Any) -> RpcError:
    with pytest.raises(RpcError) as caught:
        adopt(d, session, **params)
    return caught.value


def test_an_imported_claude_session_becomes_root_1_of_a_new_thread_read_by_the_transcript(
    d: DaemonProcess,
) -> None:
    result = adopt(d, CLAUDE_SESSION)
    assert result["createdThread"] and result["sequence"] == 1
    assert result["entries"] == CLAUDE_COUNTS[CLAUDE_SESSION]
    tid = result["threadId"]
    thread = d.call("thread/show", {"threadId": tid})["thread"]
    assert thread["title"] and thread["contextRevision"] == 1
    assert thread["revision"] == 2  # created, adopted: one transaction moved it once
    shown = items(d, tid)
    assert shown[0]["type"] == "root" and shown[0]["status"] == "completed"
    said = [item for item in shown if item["type"] in ("prompt", "reply", "tool")]
    assert said and all(item["sequence"] == 1 for item in said)
    assert {item["executionId"] for item in said} == {result["adoptedFrom"]}
    page = d.call("thread/transcript", {"threadId": tid})
    root = page["roots"][0]
    assert root["origin"]["adoptedFrom"] == result["adoptedFrom"]
    assert root["nativeSessionId"] == CLAUDE_SESSION and root["runtime"] == "claude"
    log = d.cli("thread", "log", tid)
    assert log.returncode == 0, log.stderr
    assert "root #1 · claude (claude) · interactive" in log.stdout
    assert "⚙ Bash" in log.stdout and not any(
        line.startswith("{") for line in log.stdout.splitlines()
    )


def test_a_codex_session_by_its_execution_id_joins_an_idle_thread_as_its_next_root(
    d: DaemonProcess, work: Path
) -> None:
    first = adopt(d, CLAUDE_SESSION)
    tid = first["threadId"]
    held = d.call("history/import", {"runtime": "codex", "path": str(FIXTURES / "codex")})
    execution_id = next(
        s["executionId"] for s in held["sessions"] if s["nativeSessionId"] == CODEX_SESSION
    )
    second = adopt(d, execution_id, threadId=tid, ifRevision=2)
    assert (second["sequence"], second.get("createdThread", False), second["revision"]) == (
        2,
        False,
        3,
    )
    assert second["entries"] == CODEX_COUNTS[CODEX_SESSION]
    sequences = [item.get("sequence") for item in items(d, tid) if item["type"] == "root"]
    assert sequences == [1, 2]
    assert d.call("thread/show", {"threadId": tid})["thread"]["contextRevision"] == 2


def test_adopting_twice_is_session_already_adopted_naming_the_root(d: DaemonProcess) -> None:
    first = adopt(d, CLAUDE_SESSION)
    error = refused(d, CLAUDE_SESSION)
    assert error.name == "SESSION_ALREADY_ADOPTED"
    assert error.data["threadId"] == first["threadId"]
    assert error.data["executionId"] == first["executionId"] and error.data["sequence"] == 1
    other = d.call("thread/create", {"title": "other"})["id"]
    assert refused(d, first["adoptedFrom"], threadId=other).name == "SESSION_ALREADY_ADOPTED"
    # the refused adoption left nothing: no thread, no root, no revision
    assert d.call("thread/show", {"threadId": other})["thread"]["revision"] == 1
    titles = [t["title"] for t in d.call("thread/list", {"all": True})["threads"]]
    assert len(titles) == 2


def test_a_busy_a_closed_an_unknown_and_a_stale_thread_are_refused_by_name(
    d: DaemonProcess, work: Path
) -> None:
    busy = d.call("thread/create", {"title": "busy", "cwd": str(work)})["id"]
    d.call("thread/continue", {"threadId": busy, "agent": "slow", "headless": True,
                               "prompt": "wait", "cwd": str(work)})  # fmt: skip
    assert refused(d, CLAUDE_SESSION, threadId=busy).name == "THREAD_BUSY"
    closed = d.call("thread/create", {"title": "closed"})["id"]
    d.call("thread/close", {"threadId": closed})
    assert refused(d, CLAUDE_SESSION, threadId=closed).name == "THREAD_CLOSED"
    assert refused(d, CLAUDE_SESSION, threadId="thr_nope").name == "THREAD_NOT_FOUND"
    idle = d.call("thread/create", {"title": "idle"})["id"]
    assert refused(d, CLAUDE_SESSION, threadId=idle, ifRevision=7).name == (
        "THREAD_REVISION_CONFLICT"
    )
    assert refused(d, "no-such-session").name == "EXECUTION_NOT_FOUND"
    root = roots(d, busy)[0]["id"]
    assert refused(d, root).name == "INVALID_ARGUMENT"
    # and after all that, the session is still free to adopt
    assert adopt(d, CLAUDE_SESSION, threadId=idle)["sequence"] == 1
    d.call("execution/cancel", {"executionId": root})


def test_continue_after_adopt_opens_root_2_with_the_sessions_tail_but_not_its_text_pinned(
    d: DaemonProcess, work: Path
) -> None:
    adopted = adopt(d, CODEX_SESSION)
    tid = adopted["threadId"]
    context = d.call("thread/context", {"threadId": tid})
    pinned = str(context)
    assert "adopted codex session" in pinned
    said = [i["text"] for i in items(d, tid) if i["type"] in ("prompt", "reply") and i["text"]]
    assert said and not any(text[:40] in pinned for text in said)
    d.call("thread/continue", {"threadId": tid, "agent": "ctx", "headless": True,
                               "prompt": "go on", "cwd": str(work)})  # fmt: skip
    wait_for(
        lambda: [r["status"] for r in roots(d, tid)] == ["settled", "settled"],
        what="root #2",
    )
    second = roots(d, tid)[1]
    assert second["outcome"] == "completed"
    printed = d.call("execution/logs", {"executionId": second["id"]})["stdout"]
    head, _, derived = printed.partition(TAIL_HEADING)
    assert "adopted codex session" in head
    assert derived and said[-1][-40:] in derived


def test_alp_thread_adopt_says_where_it_went_and_how_to_go_on(d: DaemonProcess) -> None:
    done = d.cli("thread", "adopt", CLAUDE_SESSION)
    assert done.returncode == 0, done.stderr
    assert f"adopted {CLAUDE_SESSION} as root #1 of a new thread" in done.stdout
    assert "alp thread continue thread_" in done.stdout
    again = d.cli("thread", "adopt", CLAUDE_SESSION)
    assert again.returncode != 0 and "SESSION_ALREADY_ADOPTED" in again.stderr


def test_one_threads_transcript_holds_claude_and_codex_sessions_a_handoff_and_an_undo(
    d: DaemonProcess, work: Path
) -> None:
    tid = adopt(d, CLAUDE_SESSION)["threadId"]
    adopt(d, CODEX_SESSION, threadId=tid)
    other = d.call("thread/create", {"title": "release notes", "cwd": str(work)})["id"]
    d.call("thread/push", {"threadId": other, "text": "start", "source": "me", "agent": "echo"})
    wait_for(lambda: [r["status"] for r in roots(d, other)] == ["settled"], what="other's root")
    sent = d.call("handoff/send", {"target": other, "summary": "the fork works", "from": tid})
    wait_for(
        lambda: [r["status"] for r in roots(d, other)] == ["settled", "settled"],
        what="the handoff's round",
    )
    d.call("thread/undo", {"threadId": tid})
    shown = items(d, tid)
    kinds = [(item["type"], item.get("sequence")) for item in shown]
    assert kinds[0] == ("root", 1) and ("root", 2) in kinds
    second = kinds.index(("root", 2))
    claude_said = [i for i in shown[:second] if i["type"] in ("prompt", "reply", "tool")]
    codex_said = [i for i in shown[second:] if i["type"] in ("prompt", "reply", "tool")]
    assert len(claude_said) >= 4 and len(codex_said) >= 2
    assert all("undone" in i["labels"] for i in codex_said)
    assert not any(i.get("labels") for i in claude_said)
    out = next(i for i in shown if i["type"] == "handoff-out")
    assert out["text"] == "the fork works" and out["threadId"] == other
    assert out["source"] == "release notes"
    assert [i["type"] for i in shown][-1] == "undo"  # after the handoff, the newest item
    page = d.call("thread/transcript", {"threadId": tid, "after": "", "limit": 500})
    runtimes = {r["sequence"]: r["runtime"] for r in page["roots"]}
    assert runtimes == {1: "claude", 2: "codex"}
    received = items(d, other)
    handoff_in = next(i for i in received if i["type"] == "handoff-in")
    assert handoff_in["text"] == "the fork works" and handoff_in["sequence"] == 2
    assert handoff_in["envelope"] and sent["handoff"]["id"]
    log = d.cli("thread", "log", tid, "--limit", "500")
    assert "root #2 · codex (codex) · interactive" in log.stdout
    assert "handoff to release notes" in log.stdout and "taken back" in log.stdout


def test_execution_logs_of_an_imported_session_says_how_to_read_it(d: DaemonProcess) -> None:
    held = d.call("history/import", {"runtime": "claude", "path": str(FIXTURES / "claude")})
    assert isinstance(held, dict)
    legacy = next(
        s["executionId"] for s in held["sessions"] if s["nativeSessionId"] == CLAUDE_SESSION
    )
    done = d.cli("execution", "logs", legacy)
    assert done.returncode == 0, done.stderr
    assert "is a session imported from before alp" in done.stderr
    assert f"`alp thread adopt {legacy}`, then `alp thread log THREAD`" in done.stderr
    adopted = adopt(d, legacy)
    root = roots(d, adopted["threadId"])[0]["id"]
    done = d.cli("execution", "logs", root)
    assert done.returncode == 0, done.stderr
    assert f"(what it said: `alp thread log {adopted['threadId']}`)" in done.stderr
