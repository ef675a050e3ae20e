"""The web page's pages, actions and event stream over HTTP, on a real alpd: each action is
the CLI's wire method (same result, same named error), and /events carries the daemon's
notifications as server-sent events."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from polling import wait_for
from webpage import open_page

from alpd.testing.daemon import DaemonProcess, running_daemon

CONFIG = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "echo ran"]
"""


@pytest.fixture
def d(tmp_path: Path) -> Iterator[DaemonProcess]:
    (tmp_path / "config.toml").write_text(CONFIG)
    with running_daemon(tmp_path, extra_args=["--config", str(tmp_path / "config.toml")]) as daemon:
        yield daemon


def cli_json(d: DaemonProcess, *args: str) -> Any:
    done = d.cli("--json", *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def test_alp_web_prints_the_page_and_a_login_url(d: DaemonProcess) -> None:
    done = d.cli("web")
    assert done.returncode == 0, done.stderr
    assert re.search(r"web page started: http://127\.\d+\.\d+\.\d+:\d+/", done.stdout)
    assert re.search(
        r"log in \(once, in your browser\): http://127\.\d+\.\d+\.\d+:\d+/login\?code=", done.stdout
    )
    assert "already on" in d.cli("web").stdout


def test_the_threads_page_lists_what_the_cli_made(d: DaemonProcess) -> None:
    thread = cli_json(d, "thread", "create", "--title", "<b>bold</b> plans")
    page = open_page(d)
    answer = page.request("GET", "/", cookie=page.log_in())
    assert answer.status == 200
    assert f'href="/t/{thread["id"]}"' in answer.body
    assert "&lt;b&gt;bold&lt;/b&gt; plans" in answer.body and "<b>bold" not in answer.body


def test_continue_from_the_page_is_a_headless_web_root(d: DaemonProcess) -> None:
    thread = cli_json(d, "thread", "create", "--title", "t")
    page = open_page(d)
    cookie = page.log_in()
    answer = page.request(
        "POST", f"/t/{thread['id']}/continue", cookie=cookie, origin=page.origin,
        form="prompt=go&agent=echo",
    )  # fmt: skip
    assert answer.status == 303 and answer.headers["location"] == f"/t/{thread['id']}"

    def settled() -> Any:
        roots = cli_json(d, "thread", "show", thread["id"])["roots"]
        return roots and roots[0].get("outcome") == "completed" and roots[0]

    root = wait_for(settled, what="the root to complete")
    assert root["headless"] is True and root["origin"]["door"] == "web"
    shown = page.request("GET", f"/t/{thread['id']}", cookie=cookie)
    assert 'data-status="completed"' in shown.body and root["id"] in shown.body


def test_a_domain_error_is_shown_by_name_with_what_was_typed(d: DaemonProcess) -> None:
    thread = cli_json(d, "thread", "create", "--title", "t")
    page = open_page(d)
    cookie = page.log_in()
    answer = page.request(
        "POST", f"/t/{thread['id']}/continue", cookie=cookie, origin=page.origin,
        form="prompt=keep+me&agent=nobody",
    )  # fmt: skip
    assert answer.status == 404
    assert "AGENT_NOT_FOUND" in answer.body and "keep me" in answer.body
    missing = page.request("GET", "/t/thread_nope", cookie=cookie)
    assert missing.status == 404 and "THREAD_NOT_FOUND" in missing.body


def test_push_from_the_page_is_the_push_the_cli_makes(d: DaemonProcess) -> None:
    thread = cli_json(d, "thread", "create", "--title", "t")
    cli_json(
        d, "thread", "continue", thread["id"], "--agent", "echo", "--headless", "--prompt", "x"
    )
    page = open_page(d)
    answer = page.request(
        "POST", f"/t/{thread['id']}/push", cookie=page.log_in(), origin=page.origin,
        form="text=disk+is+full",
    )  # fmt: skip
    assert answer.status == 303

    def pushed() -> Any:
        roots = cli_json(d, "thread", "show", thread["id"])["roots"]
        return [r for r in roots if r["kind"] == "push"]

    push_root = wait_for(pushed, what="a push root")[0]
    assert push_root["origin"]["door"] == "web" and push_root["origin"]["pushSource"] == "web page"


def test_pause_and_resume_from_the_page(d: DaemonProcess) -> None:
    thread = cli_json(d, "thread", "create", "--title", "t")
    schedule = cli_json(d, "schedule", "add", thread["id"], "--every", "1h", "--agent", "echo",
                        "--", "check")  # fmt: skip
    page = open_page(d)
    cookie = page.log_in()
    path = f"/schedules/{schedule['id']}"
    assert page.request("POST", f"{path}/pause", cookie=cookie, origin=page.origin).status == 303
    assert cli_json(d, "schedule", "show", schedule["id"])["status"] == "paused"
    assert page.request("POST", f"{path}/resume", cookie=cookie, origin=page.origin).status == 303
    assert cli_json(d, "schedule", "show", schedule["id"])["status"] == "active"
    gone = page.request("POST", "/schedules/sch_nope/pause", cookie=cookie, origin=page.origin)
    assert gone.status == 404 and "SCHEDULE_NOT_FOUND" in gone.body


def test_the_running_and_schedules_pages_show_ps(d: DaemonProcess) -> None:
    page = open_page(d)
    cookie = page.log_in()
    running = page.request("GET", "/ps", cookie=cookie)
    assert running.status == 200 and "reconciler" in running.body and "scheduler" in running.body


def test_events_stream_the_daemons_notifications(d: DaemonProcess) -> None:
    page = open_page(d)
    connection = http.client.HTTPConnection(page.address, page.port, timeout=30)
    connection.request("GET", "/events", headers={"Host": page.host, "Cookie": page.log_in()})
    response = connection.getresponse()
    assert response.status == 200
    assert response.getheader("content-type", "").startswith("text/event-stream")
    assert response.getheader("cache-control") == "no-store"
    thread = cli_json(d, "thread", "create", "--title", "streamed")
    line = b""
    while not line.startswith(b"data: "):
        line = response.fp.readline()
    event = json.loads(line.removeprefix(b"data: "))
    assert event["method"] == "thread/changed"
    assert event["params"]["thread"]["id"] == thread["id"]
    connection.close()


def test_the_daemon_stops_cleanly_with_a_stream_open(d: DaemonProcess) -> None:
    page = open_page(d)
    connection = http.client.HTTPConnection(page.address, page.port, timeout=30)
    connection.request("GET", "/events", headers={"Host": page.host, "Cookie": page.log_in()})
    assert connection.getresponse().status == 200
    assert d.stop(timeout=20) == 0
    assert "Traceback" not in d.log_text()
    connection.close()


def test_clear_and_undo_from_the_page_are_the_cli_steps(d: DaemonProcess) -> None:
    thread = cli_json(d, "thread", "create", "--title", "t")
    started = cli_json(d, "thread", "continue", thread["id"], "--agent", "echo", "--headless",
                       "--prompt", "x")  # fmt: skip
    wait_for(lambda: cli_json(d, "execution", "show", started["execution"]["id"]).get("outcome"),
             what="the root to settle")  # fmt: skip
    page = open_page(d)
    cookie = page.log_in()
    path = f"/t/{thread['id']}"

    def revision() -> int:
        return int(cli_json(d, "thread", "show", thread["id"])["thread"]["contextRevision"])

    before = revision()
    undone = page.request("POST", f"{path}/undo", cookie=cookie, origin=page.origin)
    assert undone.status == 303, undone.body[:300]
    assert revision() == before + 1
    again = page.request("POST", f"{path}/undo", cookie=cookie, origin=page.origin)
    assert again.status == 409 and "THREAD_NOTHING_TO_UNDO" in again.body
    cleared = page.request("POST", f"{path}/clear", cookie=cookie, origin=page.origin)
    assert cleared.status == 303, cleared.body[:300]
    assert revision() == before + 2


def test_the_inbox_page_confirms_and_dismisses(d: DaemonProcess) -> None:
    cli_json(d, "thread", "create", "--title", "monitor")
    target = cli_json(d, "thread", "create", "--title", "target")
    cli_json(
        d, "thread", "continue", target["id"], "--agent", "echo", "--headless", "--prompt", "x"
    )
    held = [
        cli_json(d, "handoff", "target", "--directive", "--from", "monitor", "--", text)["handoff"]
        for text in ("confirm me", "dismiss me")
    ]
    page = open_page(d)
    cookie = page.log_in()
    listed = page.request("GET", "/inbox", cookie=cookie)
    assert "confirm me" in listed.body and "dismiss me" in listed.body
    for item, action in zip(held, ("confirm", "dismiss"), strict=True):
        done = page.request("POST", f"/inbox/{item['id']}/{action}", cookie=cookie,
                            origin=page.origin)  # fmt: skip
        assert done.status == 303, done.body[:300]
    assert cli_json(d, "inbox")["items"] == []
    again = page.request("POST", f"/inbox/{held[0]['id']}/confirm", cookie=cookie,
                         origin=page.origin)  # fmt: skip
    assert again.status == 404 and "INBOX_ITEM_NOT_FOUND" in again.body


def test_the_thread_page_shows_handoffs_in_and_out(d: DaemonProcess) -> None:
    source = cli_json(d, "thread", "create", "--title", "research")
    target = cli_json(d, "thread", "create", "--title", "build")
    cli_json(
        d, "thread", "continue", target["id"], "--agent", "echo", "--headless", "--prompt", "x"
    )
    cli_json(d, "handoff", "build", "--from", "research", "--", "use <sqlite> & WAL")
    page = open_page(d)
    cookie = page.log_in()
    into = page.request("GET", f"/t/{target['id']}", cookie=cookie).body
    assert "Handoffs" in into and f'href="/t/{source["id"]}"' in into
    assert "use &lt;sqlite&gt; &amp; WAL" in into
    out = page.request("GET", f"/t/{source['id']}", cookie=cookie).body
    assert f'href="/t/{target["id"]}"' in out and "to <a" in out


def test_alp_web_imports_nothing_of_the_page(d: DaemonProcess, tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "from alpctl.cli import main\n"
        "assert main(['web', '--json']) == 0\n"
        "heavy = {'alpd', 'starlette', 'uvicorn', 'jinja2', 'anyio', 'msgspec'}\n"
        "loaded = {n.split('.')[0] for n in sys.modules} & heavy\n"
        "print(json.dumps(sorted(loaded)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=d.env, capture_output=True, text=True, timeout=60,
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert re.match(r"http://127\.\d+\.\d+\.\d+:", json.loads(done.stdout)["loginUrl"])
    assert json.loads(done.stderr.strip().splitlines()[-1]) == []


def test_control_characters_in_a_title_are_escaped_in_the_page(d: DaemonProcess) -> None:
    created = d.call("thread/create", {"title": "nul\x00here bell\x07 <i>x</i>"})
    assert isinstance(created, dict)
    page = open_page(d)
    cookie = page.log_in()
    for path in ("/", f"/t/{created['id']}"):
        answer = page.request("GET", path, cookie=cookie)
        assert answer.status == 200
        assert "\x00" not in answer.body and "\x07" not in answer.body, path
        assert "nul\u2400here bell\u2407 &lt;i&gt;x&lt;/i&gt;" in answer.body, path
