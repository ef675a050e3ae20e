"""The conversation on the thread page, over HTTP on a real alpd: the page opens on the
newest items of `thread/transcript`, `/t/ID/transcript` pages back to the start and on to
what came since (the same items as the method, in the same order), a tool call's whole text
on request, errors by name; the composer's continue and push answered in JSON for the
script, behind the same cookie and Origin checks; Clear asks first."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from conversations import adopted_thread
from daemons import StartAlpd
from polling import wait_for
from webpage import WebPage, open_page

from alpd.testing.daemon import DaemonProcess

CONFIG = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat; echo done"]
"""
TURNS = 60  # 180 items after the root marker: two pages back from the newest

CURSOR = re.compile(r'<li class="item[^"]*" data-cursor="([^"]+)"')


@pytest.fixture
def d(start_alpd: StartAlpd) -> DaemonProcess:
    return start_alpd(CONFIG)


@pytest.fixture
def web(d: DaemonProcess) -> tuple[WebPage, str]:
    page = open_page(d)
    return page, page.log_in()


def attribute(body: str, name: str) -> str:
    found = re.search(rf'<ol id="(?:page|transcript)"[^>]* {name}="([^"]*)"', body)
    assert found, body[:500]
    return found.group(1)


def every_item(d: DaemonProcess, thread_id: str) -> list[str]:
    page = d.call("thread/transcript", {"threadId": thread_id, "after": "", "limit": 500})
    assert isinstance(page, dict)
    return [item["cursor"] for item in page["items"]]


def test_the_page_opens_on_the_newest_items_and_pages_back_to_the_start(
    d: DaemonProcess, web: tuple[WebPage, str], tmp_path: Path, work: Path
) -> None:
    page, cookie = web
    tid = adopted_thread(d, tmp_path / "sessions", TURNS, work, "long one")
    opened = page.request("GET", f"/t/{tid}", cookie=cookie)
    assert opened.status == 200
    conversation = opened.body[opened.body.index('id="transcript"') :]
    shown = CURSOR.findall(conversation)
    # a page is at most 100 items (a tool call's result row counts, shown with its call)
    assert 50 <= len(shown) <= 100 and attribute(opened.body, "data-more-before") == "1"
    assert shown == every_item(d, tid)[-len(shown) :]
    # the assistant's Markdown rendered, its code block kept, a script in it only text
    assert '<pre><code class="language-python">print(&#39;&lt;b&gt;turn 60' in conversation
    assert "&lt;script&gt;alert(60)&lt;/script&gt;" in conversation
    assert "<script>alert" not in opened.body
    assert '<details class="tool"><summary>⚙ Bash {&#34;command&#34;:&#34;make 60' in conversation

    previous = attribute(opened.body, "data-previous")
    while previous:
        older = page.request("GET", f"/t/{tid}/transcript?before={previous}", cookie=cookie)
        assert older.status == 200, older.body[:300]
        shown = CURSOR.findall(older.body) + shown
        previous = attribute(older.body, "data-previous")
        if not attribute(older.body, "data-more-before"):
            break
    assert shown == every_item(d, tid)
    assert (
        "root #1 · claude (claude)"
        in page.request("GET", f"/t/{tid}/transcript?after=&limit=1", cookie=cookie).body
    )


def test_a_tool_calls_whole_text_on_request(
    d: DaemonProcess, web: tuple[WebPage, str], tmp_path: Path, work: Path
) -> None:
    page, cookie = web
    tid = adopted_thread(d, tmp_path / "sessions", 2, work, "tools")
    cursors = every_item(d, tid)
    short = page.request("GET", f"/t/{tid}/transcript?after={cursors[2]}&limit=1", cookie=cookie)
    assert "line 0 of the build output" not in short.body and "Show the whole call" in short.body
    whole = page.request(
        "GET", f"/t/{tid}/transcript?after={cursors[2]}&limit=1&full=1", cookie=cookie
    )
    assert CURSOR.findall(whole.body) == [cursors[3]]
    assert "line 0 of the build output" in whole.body and "Show the whole call" not in whole.body


def test_a_bad_cursor_and_an_unknown_thread_are_errors_by_name(
    d: DaemonProcess, web: tuple[WebPage, str]
) -> None:
    page, cookie = web
    thread = d.call("thread/create", {"title": "t"})
    bad = page.request("GET", f"/t/{thread['id']}/transcript?before=t1.forged", cookie=cookie)
    assert bad.status == 400 and 'role="alert"><strong>INVALID_ARGUMENT</strong>' in bad.body
    gone = page.request("GET", "/t/thread_nope/transcript", cookie=cookie)
    assert gone.status == 404 and "THREAD_NOT_FOUND" in gone.body
    empty = page.request("GET", f"/t/{thread['id']}", cookie=cookie)
    assert empty.status == 200 and not CURSOR.findall(empty.body)


def composer(page: WebPage, cookie: str, path: str, form: str, **headers: Any) -> Any:
    answer = page.request(
        "POST", path, cookie=cookie, origin=headers.get("origin", page.origin), form=form,
        accept="application/json",
    )  # fmt: skip
    assert answer.headers["content-type"] == "application/json", answer
    return answer.status, json.loads(answer.body)


def test_the_composer_continues_and_pushes_and_names_its_errors(
    d: DaemonProcess, web: tuple[WebPage, str]
) -> None:
    page, cookie = web
    thread = d.call("thread/create", {"title": "composed"})
    path = f"/t/{thread['id']}"
    status, answer = composer(page, cookie, f"{path}/continue", "prompt=hello&agent=nobody")
    assert status == 404 and answer["ok"] is False
    assert answer["error"]["name"] == "AGENT_NOT_FOUND" and answer["error"]["message"]

    status, answer = composer(page, cookie, f"{path}/continue", "prompt=hello&agent=echo")
    assert status == 200 and answer["ok"], answer
    first = answer["result"]["execution"]
    said = f"Continued: root #1 ({first['id']}) runs headless with your prompt."
    assert answer["message"] == said
    assert first["origin"]["door"] == "web"

    def idle() -> bool:
        return not d.call("thread/show", {"threadId": thread["id"]})["thread"].get("busyRoot")

    wait_for(idle, what="root #1 to settle")
    status, answer = composer(page, cookie, f"{path}/push", "prompt=disk+is+full")
    assert status == 200 and answer["ok"], answer
    assert answer["result"]["status"] == "started"
    second = answer["result"]["execution"]
    assert answer["message"] == f"Pushed: the thread was idle; root #2 ({second['id']}) reads it."

    def pushed_and_reported() -> list[dict[str, Any]] | None:
        page_ = d.call("thread/transcript", {"threadId": thread["id"], "root": 2})
        kinds = [item["type"] for item in page_["items"]]
        return page_["items"] if "report" in kinds else None

    items = wait_for(pushed_and_reported, what="root #2's report")
    push = next(item for item in items if item["type"] == "push")
    assert push["text"] == "disk is full" and push["source"] == "web page"
    # the page's own Origin check holds for the composer as for every change
    refused = page.request("POST", f"{path}/push", cookie=cookie, form="prompt=x",
                           origin="http://evil.example")  # fmt: skip
    assert refused.status == 403


def test_what_came_since_is_read_after_the_last_cursor(
    d: DaemonProcess, web: tuple[WebPage, str]
) -> None:
    page, cookie = web
    thread = d.call("thread/create", {"title": "since"})
    d.call("thread/push", {"threadId": thread["id"], "text": "first", "source": "ci",
                           "agent": "echo"})  # fmt: skip
    wait_for(lambda: len(every_item(d, thread["id"])) >= 3, what="root #1's items")
    opened = page.request("GET", f"/t/{thread['id']}", cookie=cookie)
    after = attribute(opened.body, "data-next")
    nothing = page.request("GET", f"/t/{thread['id']}/transcript?after={after}", cookie=cookie)
    assert CURSOR.findall(nothing.body) == []
    d.call("thread/push", {"threadId": thread["id"], "text": "second", "source": "ci"})
    wait_for(lambda: len(every_item(d, thread["id"])) >= 6, what="root #2's items")
    since = page.request("GET", f"/t/{thread['id']}/transcript?after={after}", cookie=cookie)
    assert CURSOR.findall(since.body) == every_item(d, thread["id"])[len(CURSOR.findall(
        opened.body[opened.body.index('id="transcript"'):])):]  # fmt: skip
    assert "push · ci" in since.body and "second" in since.body
    assert re.search(r'<li data-root="exec_[^"]+">completed', since.body)


def test_clear_asks_first(d: DaemonProcess, web: tuple[WebPage, str]) -> None:
    page, cookie = web
    thread = d.call("thread/create", {"title": "keep"})
    asked = page.request("GET", f"/t/{thread['id']}/clear", cookie=cookie)
    assert asked.status == 200
    assert f'<form method="post" action="/t/{thread["id"]}/clear">' in asked.body
    assert d.call("thread/show", {"threadId": thread["id"]}).get("steps", []) == []
    opened = page.request("GET", f"/t/{thread['id']}", cookie=cookie)
    assert f'<form method="get" action="/t/{thread["id"]}/clear">' in opened.body
