"""The recap on a real alpd: a thread whose roots settle gets a recap from the API summariser
(pointed at the scripted model server on 127.0.0.1), shown by `thread/recap`, `alp thread
show` and `alp thread list`, carried by the next root; the refresh is a costed `temp`
execution; without a summariser the recap is off and says why and how to turn it on.

Roots are `command` runs given a Claude Code transcript (written here) as their own, as the
history tests do, so the thread has real history entries copied by the daemon.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from e2e.model_server import ModelServer, TextReply
from polling import wait_for
from transcripts import Claude, db, write_db

from alpd.domain.recap.summary import INSTRUCTIONS
from alpd.testing.daemon import DaemonProcess, running_daemon

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
RECAP = {
    "headline": "Benchmark rerun: four models left",
    "gist": "The benchmark was rerun for three of seven models; the rest failed on OOM.",
    "openTasks": ["rerun the four remaining models", "compare against last week"],
}
CONFIG = """
[recap]
summariser = "api"
apiUrl = "{url}"
minRoots = 3
minIntervalSeconds = 0

[runtimes.claude]
prices = {{ claude-haiku-4-5 = {{ input = 1.0, output = 5.0 }} }}

[agents.plain]
runtime = "command"
args = ["true"]
recap = false
"""

#: the recap waits for six readable entries (three exchanges), whatever the roots
STEER_CONFIG = """
[recap]
summariser = "api"
apiUrl = "{url}"
minRoots = 100
minEntries = 6
minIntervalSeconds = 0
"""


@pytest.fixture
def server() -> Iterator[ModelServer]:
    with ModelServer() as running:
        yield running


@pytest.fixture
def d(tmp_path: Path, server: ModelServer) -> Iterator[DaemonProcess]:
    config = tmp_path / "config.toml"
    config.write_text(CONFIG.format(url=server.url))
    with running_daemon(
        tmp_path,
        extra_env={"ANTHROPIC_API_KEY": "test-key"},
        extra_args=["--config", str(config)],
    ) as daemon:
        yield daemon


def settled_root(d: DaemonProcess, thread_id: str, work: Path, *said: bytes) -> str:
    """A root whose transcript holds `said`, settled (which copies its history)."""
    started = d.call(
        "thread/continue",
        {
            "threadId": thread_id,
            "runtime": "command",
            "headless": True,
            "args": ["sleep", "60"],
            "cwd": str(work),
        },
    )
    assert isinstance(started, dict)
    execution_id = str(started["execution"]["id"])
    transcript = work / f"{execution_id}.jsonl"
    transcript.write_bytes(b"".join(said))
    with write_db(d.home) as conn:
        conn.execute(
            "UPDATE executions SET transcript_path = ? WHERE id = ?",
            (str(transcript), execution_id),
        )
    d.call("execution/cancel", {"executionId": execution_id})
    return execution_id


def ps(d: DaemonProcess, *, everything: bool = False) -> dict[str, Any]:
    result = d.call("daemon/ps", {"all": everything})
    assert isinstance(result, dict)
    return result


def recap(d: DaemonProcess, thread_id: str) -> dict[str, Any]:
    result = d.call("thread/recap", {"threadId": thread_id})
    assert isinstance(result, dict)
    return result


def test_three_roots_get_a_recap_that_the_fourth_root_opens_with(
    d: DaemonProcess, server: ModelServer, tmp_path: Path
) -> None:
    thread = d.call("thread/create", {"title": "bench", "cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    claude = Claude()
    server.script(TextReply("```json\n" + json.dumps(RECAP) + "\n```", delay=4.0))
    settled_root(d, thread["id"], tmp_path, claude.prompt("run the benchmark"), claude.reply("3/7"))
    settled_root(d, thread["id"], tmp_path, claude.prompt(f"key is {AWS_KEY}"), claude.reply("ok"))
    assert recap(d, thread["id"]).get("headline") is None  # two roots: below minRoots
    last = settled_root(
        d, thread["id"], tmp_path, claude.prompt("rerun the failed"), claude.reply("4 left: OOM")
    )
    # while the model takes its time, the refresh is a hidden job: `ps --all` shows it
    quiet = wait_for(lambda: ps(d).get("hidden") and ps(d), what="the refresh, hidden from ps")
    assert [job for job in quiet["jobs"] if job["kind"] == "temp"] == []
    running = [job for job in ps(d, everything=True)["jobs"] if job["kind"] == "temp"]
    assert [(job["origin"]["purpose"], job["agent"]) for job in running] == [("recap", "recap")]
    made = wait_for(lambda: recap(d, thread["id"]).get("headline"), what="the recap")
    assert made == RECAP["headline"]
    shown = recap(d, thread["id"])
    assert shown["gist"] == RECAP["gist"] and shown["openTasks"] == RECAP["openTasks"]
    assert shown["label"].startswith("derived") and shown["state"]["available"] is True
    assert shown["sourceRevision"] == 3 and shown["madeAt"]

    [request] = server.model_requests("anthropic")
    assert request.body["model"] == "claude-haiku-4-5"
    assert request.body["system"] == INSTRUCTIONS
    sent = request.body["messages"][0]["content"]
    assert "run the benchmark" in sent and "4 left: OOM" in sent
    assert AWS_KEY not in sent and "[REDACTED:" in sent

    temp = d.call("execution/show", {"executionId": shown["executionId"]})
    assert isinstance(temp, dict)
    assert (temp["kind"], temp["origin"]["purpose"], temp["status"]) == ("temp", "recap", "settled")
    assert temp["costUsd"] > 0 and temp["usage"]["inputTokens"] > 0
    assert temp["policy"]["binding"]["contextRevision"] == 3
    activity = d.call("activity/list", {"threadId": thread["id"], "kind": "temp"})
    assert isinstance(activity, dict)
    assert [item["executionId"] for item in activity["items"]] == [shown["executionId"]]

    listed = d.cli("thread", "list", cwd=str(tmp_path))
    assert RECAP["headline"] in listed.stdout
    printed = d.cli("thread", "show", thread["id"])
    assert "recap (derived from history by a model; not authority)" in printed.stdout
    assert "rerun the four remaining models" in printed.stdout
    # the refresh is the thread's temp work, not a delegated child of a root
    assert "delegated child" not in printed.stdout
    assert "+ 1 temp run(s): the recap's refreshes" in printed.stdout
    counted = d.call("thread/show", {"threadId": thread["id"]})
    assert isinstance(counted, dict)
    assert (counted.get("children", 0), counted["temp"]) == (0, 1)  # a zero is left out

    fourth = d.call(
        "thread/continue",
        {"threadId": thread["id"], "runtime": "command", "headless": True, "args": ["true"]},
    )
    assert isinstance(fourth, dict)
    context = Path(fourth["sessionContextPath"]).read_text()
    pinned, _, derived = context.partition("\n# recap: derived from history, not authority")
    assert RECAP["gist"] in derived and "rerun the four remaining models" in derived
    assert "4 left: OOM" in derived.split("# the last exchange")[1]
    assert "4 left: OOM" not in pinned and RECAP["gist"] not in pinned
    assert "The end of what was said in root 3" in derived
    with db(d.home) as conn:
        given = conn.execute(
            "SELECT * FROM root_derived WHERE execution_id = ?", (fourth["execution"]["id"],)
        ).fetchone()
    assert (given["recap_revision"], given["tail_from"]) == (3, last)


class ThreadChanges:
    """A subscription to one thread's `thread/changed` notifications, read when asked."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.heard: list[dict[str, Any]] = []
        self._pending = b""

    def changes(self) -> list[str]:
        """Every change heard so far, in order (reading what has arrived)."""
        try:
            while chunk := self.sock.recv(65536):
                self._pending += chunk
        except TimeoutError:
            pass
        *lines, self._pending = self._pending.split(b"\n")
        self.heard += [json.loads(line)["params"] for line in lines if b'"method"' in line]
        return [params["change"] for params in self.heard]

    def recaps(self) -> list[dict[str, Any]]:
        """The thread as each `recap` change carried it."""
        self.changes()
        return [params["thread"] for params in self.heard if params["change"] == "recap"]


@contextmanager
def thread_changes(d: DaemonProcess, thread_id: str) -> Iterator[ThreadChanges]:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(d.socket_path))
        params = {"events": ["thread/changed"], "threadId": thread_id}
        request = {"jsonrpc": "2.0", "id": 1, "method": "events/subscribe", "params": params}
        sock.sendall(json.dumps(request).encode() + b"\n")
        sock.settimeout(0.05)
        yield ThreadChanges(sock)


def test_subscribers_hear_when_the_recap_is_made_and_when_a_clear_makes_it_lapse(
    d: DaemonProcess, server: ModelServer, tmp_path: Path
) -> None:
    thread = d.call("thread/create", {"title": "heard", "cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    server.script(TextReply(json.dumps(RECAP)))
    claude = Claude()
    with thread_changes(d, thread["id"]) as heard:
        for index in range(3):
            settled_root(d, thread["id"], tmp_path, claude.prompt(f"p{index}"), claude.reply("r"))
        [made] = wait_for(heard.recaps, what="the new recap, announced")
        assert made["id"] == thread["id"] and made["headline"] == RECAP["headline"]
        assert recap(d, thread["id"])["headline"] == RECAP["headline"]  # stored first
        d.call("thread/clear", {"threadId": thread["id"]})
        wait_for(lambda: len(heard.recaps()) == 2, what="the lapsed recap, announced")
        lapsed = heard.recaps()[1]
        assert "headline" not in lapsed
        assert lapsed["contextRevision"] == made["contextRevision"] + 1
        assert heard.changes()[-2:] == ["cleared", "recap"]
        # another clear: there is no recap left to lapse, so nothing more is announced
        d.call("thread/clear", {"threadId": thread["id"]})
        d.call("thread/close", {"threadId": thread["id"]})
        wait_for(lambda: heard.changes()[-1] == "closed", what="the close after it")
        assert heard.changes()[-3:] == ["recap", "cleared", "closed"]
    assert recap(d, thread["id"]).get("headline") is None


def test_an_agent_can_turn_the_recap_off(
    d: DaemonProcess, server: ModelServer, tmp_path: Path
) -> None:
    thread = d.call("thread/create", {"title": "quiet", "cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    server.script(TextReply(json.dumps(RECAP)))
    claude = Claude()
    for index in range(3):
        settled_root(d, thread["id"], tmp_path, claude.prompt(f"p{index}"), claude.reply("r"))
    wait_for(lambda: recap(d, thread["id"]).get("headline"), what="the recap")
    quiet = d.call(
        "thread/continue",
        {"threadId": thread["id"], "agent": "plain", "headless": True},
    )
    assert isinstance(quiet, dict)
    text = Path(quiet["sessionContextPath"]).read_text()
    assert "# work state, not authority" in text
    assert "# recap: derived" not in text and "# the last exchange" not in text
    assert RECAP["gist"] not in text


def test_without_a_summariser_the_recap_is_off_and_says_how_to_turn_it_on(
    tmp_path: Path,
) -> None:
    config = tmp_path / "config.toml"
    config.write_text('[runtimes.claude]\ncommand = "/nonexistent/claude"\n')
    with running_daemon(tmp_path, extra_args=["--config", str(config)]) as d:
        thread = d.call("thread/create", {"title": "t", "cwd": str(tmp_path)})
        assert isinstance(thread, dict)
        state = recap(d, thread["id"])["state"]
        assert state["available"] is False and "not found" in state["reason"]
        shown = d.cli("thread", "show", thread["id"])
        assert "off: no summariser" in shown.stdout and "to turn it on:" in shown.stdout
        ps = d.cli("ps")
        assert "RECAP off: no summariser" in ps.stdout and 'summariser = "api"' in ps.stdout
        as_json = d.cli("ps", "--json")
        assert json.loads(as_json.stdout)["recap"]["available"] is False


def test_nothing_cleared_or_undone_reaches_the_summariser_and_a_recap_before_a_clear_lapses(
    tmp_path: Path, server: ModelServer
) -> None:
    config = tmp_path / "config.toml"
    config.write_text(STEER_CONFIG.format(url=server.url))
    with running_daemon(
        tmp_path, extra_env={"ANTHROPIC_API_KEY": "k"}, extra_args=["--config", str(config)]
    ) as d:
        thread = d.call("thread/create", {"title": "steered", "cwd": str(tmp_path)})
        assert isinstance(thread, dict)
        thread_id = thread["id"]
        claude = Claude()
        server.script(TextReply(json.dumps(RECAP)))

        def root(marker: str) -> str:
            said = (claude.prompt(f"prompt {marker}"), claude.reply(f"reply {marker}"))
            return settled_root(d, thread_id, tmp_path, *said)

        def entries() -> int:
            with db(d.home) as conn:
                return int(
                    conn.execute(
                        "SELECT count(*) FROM history_entries h JOIN executions e "
                        "ON e.id = h.execution_id WHERE e.thread_id = ?",
                        (thread_id,),
                    ).fetchone()[0]
                )

        root("CLEARED-ONE")
        wait_for(lambda: entries() == 2, what="the first root's history")
        d.call("thread/clear", {"threadId": thread_id})
        root("KEPT-TWO")
        root("UNDONE-THREE")
        wait_for(lambda: entries() == 6, what="the third root's history")
        d.call("thread/undo", {"threadId": thread_id})
        root("KEPT-FOUR")
        root("KEPT-FIVE")  # six readable entries: the refresh is due
        wait_for(lambda: recap(d, thread_id).get("headline"), what="the recap")
        [request] = server.model_requests("anthropic")
        sent = request.body["messages"][0]["content"]
        for kept in ("KEPT-TWO", "KEPT-FOUR", "KEPT-FIVE"):
            assert f"prompt {kept}" in sent and f"reply {kept}" in sent
        assert "CLEARED-ONE" not in sent and "UNDONE-THREE" not in sent
        # a clear after it: the recap no longer stands, and no new root is given it
        d.call("thread/clear", {"threadId": thread_id})
        lapsed = recap(d, thread_id)
        assert lapsed.get("headline") is None and lapsed["state"]["available"] is True
        listed = d.call("thread/list", {"cwd": str(tmp_path)})
        assert isinstance(listed, dict) and "headline" not in listed["threads"][0]
        fresh = d.call(
            "thread/continue",
            {"threadId": thread_id, "runtime": "command", "headless": True, "args": ["true"]},
        )
        assert isinstance(fresh, dict)
        text = Path(fresh["sessionContextPath"]).read_text()
        assert RECAP["gist"] not in text and "KEPT-FIVE" not in text
