"""The conversation view in a real headless Chromium (Debian's, driven by Playwright).

A long thread (an imported Claude session of 1,300 items, adopted) opens at its end, tool
calls folded, code blocks kept, nothing in it executed; without a scroll the view reads older
pages until it holds 1,000 items, what was in view staying in view; an item far out of view
is not laid out, yet find in page reaches it and scrolled into view it is laid out at once,
with no read; scrolling up reads the rest until the start; a tool call's whole text comes on
request. The
composer pushes and continues without leaving the page, says what it started, names an
error and keeps what was typed; new items (from the page's own push, from `alp push` at the
command line, a root running then settling) arrive without a reload.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chromium import chromium_page, log_in, screenshot
from conversations import adopted_thread
from polling import wait_for
from webpage import WebPage, open_page

from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.browser

#: 3 items a turn and the root marker: 1,300 items, more than the view holds on opening
TURNS = 433
#: the items the view reads without a scroll (conversation.js's HELD)
HELD = 1000

#: a frame after: is this element laid out (not skipped by content-visibility)?
LAID_OUT = """(e) => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() =>
  done(e.checkVisibility({ contentVisibilityAuto: true })))))"""
#: the browser's find in page from the end of the view, wrapping, asked again up to 5 times
#: (as Enter in the find bar): does a match fall in the item with this cursor?
FOUND_IN = """([text, cursor]) => {
  const box = document.getElementById('transcript-scroll');
  box.scrollTop = box.scrollHeight;
  getSelection().removeAllRanges();
  for (let tries = 0; tries < 5; tries++) {
    if (!window.find(text, false, false, true)) return false;
    const at = getSelection().anchorNode;
    const li = (at.nodeType === 1 ? at : at.parentElement).closest('#transcript > li');
    if (li && li.dataset.cursor === cursor) return true;
  }
  return false;
}"""


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[DaemonProcess]:
    release = tmp_path / "release"
    config = tmp_path / "config.toml"
    config.write_text(
        "[agents.echo]\n"
        'runtime = "command"\n'
        'args = ["sh", "-c", "cat; echo done"]\n'
        "[agents.blocker]\n"
        'runtime = "command"\n'
        f'args = ["sh", "-c", "while [ ! -f {release} ]; do sleep 0.05; done; echo released"]\n'
    )
    with running_daemon(tmp_path, extra_args=["--config", str(config)]) as started:
        yield started


@pytest.fixture
def browser_page() -> Iterator[Any]:
    with chromium_page() as page:
        yield page


def cli_json(daemon: DaemonProcess, *args: str) -> Any:
    done = daemon.cli("--json", *args)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)


def every_cursor(daemon: DaemonProcess, thread_id: str) -> list[str]:
    cursors: list[str] = []
    after = ""
    while True:
        page = daemon.call(
            "thread/transcript", {"threadId": thread_id, "after": after, "limit": 500}
        )
        cursors += [item["cursor"] for item in page["items"]]
        if not page.get("moreAfter"):
            return cursors
        after = page["next"]


def shown_cursors(page: Any) -> list[str]:
    return list(
        page.eval_on_selector_all("#transcript > li", "els => els.map(e => e.dataset.cursor)")
    )


def open_thread(page: Any, web: WebPage, thread_id: str) -> float:
    """Seconds from asking for the thread page to its conversation placed and scrolled."""
    started = time.monotonic()
    page.goto(f"{web.url}t/{thread_id}")
    page.wait_for_selector("#transcript[data-ready='1']", state="attached")
    return time.monotonic() - started


def test_a_long_conversation_opens_at_its_end_and_scrolls_back_to_its_start(
    daemon: DaemonProcess, browser_page: Any, tmp_path: Path
) -> None:
    page = browser_page
    work = tmp_path / "work"
    work.mkdir()
    tid = adopted_thread(daemon, tmp_path / "sessions", TURNS, work, "a long conversation")
    whole = every_cursor(daemon, tid)
    assert len(whole) == 3 * TURNS + 1
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    web = open_page(daemon)
    log_in(page, web)
    opened = open_thread(page, web, tid)
    print(f"thread page of {len(whole)} items open in {opened:.3f} s")

    shown = shown_cursors(page)
    assert shown == whole[-len(shown) :]
    scroller = page.locator("#transcript-scroll")
    at_end = scroller.evaluate("s => s.scrollHeight - s.scrollTop - s.clientHeight")
    assert at_end < 48, at_end
    last = page.locator("#transcript > li").last
    assert f"make {TURNS}" in last.inner_text()
    # tool calls folded to one line; the assistant's code block kept; its script only text
    assert page.locator("#transcript details.tool").count() >= 20
    assert page.locator("#transcript details.tool[open]").count() == 0
    code = page.locator("#transcript .md pre code.language-python").last
    assert code.inner_text() == f"print('<b>turn {TURNS}</b>')"
    assert f"<script>alert({TURNS})</script> stays text" in page.locator(".md li").last.inner_text()
    screenshot(page, "conversation")

    # without a scroll, older pages until the view holds HELD items, what was in view
    # staying in view; not yet the start
    page.wait_for_selector("#transcript[data-filled='1']", state="attached")
    assert shown_cursors(page) == whole[-HELD:]
    at_end = scroller.evaluate("s => s.scrollHeight - s.scrollTop - s.clientHeight")
    assert at_end < 48, at_end
    assert page.locator("#older .meta").count() == 0

    # an item far out of view is in the page but not laid out; find in page reaches its
    # text, and scrolled into view it is laid out, its Markdown and code block with it,
    # without a read
    reads: list[str] = []
    page.on("request", lambda request: reads.append(request.url))
    far = page.locator("#transcript > li.type-reply").nth(20)
    far_cursor = far.get_attribute("data-cursor")
    assert not far.locator(".md").evaluate(LAID_OUT)
    first_words = far.locator(".md p").first.evaluate("p => p.textContent.split(',')[0]")
    assert page.evaluate(FOUND_IN, [first_words, far_cursor]), first_words
    far.evaluate("li => li.scrollIntoView()")
    assert far.locator(".md").evaluate(LAID_OUT)
    assert (
        far.locator(".md pre code.language-python").evaluate(
            "c => c.getBoundingClientRect().height"
        )
        > 0
    )
    assert far.locator(".md strong").first.inner_text() == "done"
    assert not [url for url in reads if "/transcript" in url], reads

    # scrolling to the top: the rest placed above, what was at the top staying in view
    first_cursor = page.locator("#transcript > li").first.get_attribute("data-cursor")
    started = time.monotonic()
    scroller.evaluate("s => { s.scrollTop = 0; }")
    page.wait_for_selector("#older .meta")
    print(f"scrolled back to the start of {len(whole)} items in {time.monotonic() - started:.3f} s")
    kept = page.locator(f"#transcript > li[data-cursor='{first_cursor}']")
    assert kept.evaluate("(li) => li.offsetTop") > 0
    assert scroller.evaluate("s => s.scrollTop") > 0
    assert shown_cursors(page) == whole
    assert page.locator("#older").inner_text() == "The start of the thread."
    assert (
        page.locator("#transcript > li").first.get_attribute("class").startswith("item type-root")
    )

    # one tool call's whole text, on request
    tool = page.locator("#transcript li.type-tool").first
    tool.locator("summary").click()
    assert "line 0 of the build output" not in tool.inner_text()
    tool.get_by_role("button", name="Show the whole call").click()
    page.wait_for_selector("#transcript li.type-tool >> nth=0 >> text=line 0 of the build output")
    assert dialogs == []


def test_the_composer_pushes_continues_and_names_an_error_and_new_items_arrive_live(
    daemon: DaemonProcess, browser_page: Any, tmp_path: Path
) -> None:
    page = browser_page
    thread = cli_json(daemon, "thread", "create", "--title", "on call")
    tid = thread["id"]
    first = cli_json(daemon, "thread", "continue", tid, "--agent", "echo", "--headless",
                     "--prompt", "look at the disk")["execution"]  # fmt: skip
    daemon.call("execution/wait", {"executionId": first["id"], "timeout": 30})
    wait_for(lambda: every_cursor(daemon, tid), what="root #1 in the transcript")
    web = open_page(daemon)
    log_in(page, web)
    open_thread(page, web, tid)
    page.wait_for_selector("#connection.live")
    page.evaluate("window.alpNotReloaded = true")

    # push from the composer: what became of it, then the push and its root's report
    page.fill("#prompt", "deploy is green")
    page.get_by_role("button", name="Push").click()
    result = page.locator("#composer-result")
    page.wait_for_selector("#composer-result:has-text('Pushed: the thread was idle; root #2')")
    assert result.get_attribute("role") == "status"
    assert page.input_value("#prompt") == ""
    page.locator("#transcript li.type-push", has_text="deploy is green").wait_for()
    page.locator("#transcript li.type-report", has_text="#2").wait_for()

    # an error by name; what was typed stays
    page.fill("#prompt", "try this")
    page.fill("input[name=agent]", "nobody")
    page.get_by_role("button", name="Continue").click()
    alert = page.locator("#composer-result[role=alert]")
    alert.wait_for()
    assert "AGENT_NOT_FOUND" in alert.inner_text()
    assert page.input_value("#prompt") == "try this"

    # from another door: `alp push` at the command line
    asked = time.monotonic()
    cli_json(daemon, "push", tid, "--from", "ci", "--", "nightly build failed")
    page.locator("#transcript li.type-push", has_text="nightly build failed").wait_for()
    print(f"a push from the CLI shown {time.monotonic() - asked:.3f} s after it was made")

    # a running root: its marker says so, and says how it ended when it settles
    wait_for(lambda: not daemon.call("thread/show", {"threadId": tid})["thread"].get("busyRoot"),
             what="root #3 to settle")  # fmt: skip
    page.fill("input[name=agent]", "blocker")
    page.fill("#prompt", "wait for the release")
    page.get_by_role("button", name="Continue").click()
    page.wait_for_selector("#composer-result:has-text('Continued: root #4')")
    page.locator("#transcript li.type-root", has_text="root #4").wait_for()
    root_4_is = (
        "(state) => [...document.querySelectorAll('#transcript li.type-root .root-status')]"
        ".some(s => s.closest('li').textContent.includes('root #4') &&"
        " s.textContent.startsWith(state))"
    )
    page.wait_for_function(root_4_is, arg="running")
    (tmp_path / "release").write_text("go\n")
    page.wait_for_function(root_4_is, arg="completed")
    assert page.evaluate("window.alpNotReloaded") is True
    shown = shown_cursors(page)
    assert len(shown) == len(set(shown))
    wait_for(lambda: shown_cursors(page) == every_cursor(daemon, tid) or None,
             what="the view to hold every item, in order")  # fmt: skip
    screenshot(page, "conversation-composer")


def test_the_conversation_is_readable_at_phone_width(
    daemon: DaemonProcess, browser_page: Any, tmp_path: Path
) -> None:
    page = browser_page
    work = tmp_path / "work"
    work.mkdir()
    tid = adopted_thread(daemon, tmp_path / "sessions", 5, work, "small screen")
    web = open_page(daemon)
    page.set_viewport_size({"width": 375, "height": 740})
    log_in(page, web)
    open_thread(page, web, tid)
    overflow = page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0, overflow
    screenshot(page, "phone-conversation")


#: a stand-in `claude` writing its transcript a line at a time, each when the test asks
#: (a `go-N` file in its workspace): a reply, a tool call, that call's result, a reply
STAND_IN = """#!{python}
import json, os, re, sys, time, uuid
from pathlib import Path
args = sys.argv[1:]
session = args[args.index("--session-id") + 1]
folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / re.sub(
    r"[^A-Za-z0-9]", "-", os.path.realpath(os.getcwd()))
folder.mkdir(parents=True, exist_ok=True)
transcript = folder / (session + ".jsonl")
use = {{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {{"command": "make"}}}}
result = {{"type": "tool_result", "tool_use_id": "toolu_1", "content": "built ok"}}
lines = [
    ("assistant", {{"model": "stand-in", "content": [{{"type": "text", "text": "step one"}}]}}),
    ("assistant", {{"model": "stand-in", "content": [use]}}),
    ("user", {{"role": "user", "content": [result]}}),
    ("assistant", {{"model": "stand-in", "content": [{{"type": "text", "text": "**all done**"}}]}}),
]
give_up = time.monotonic() + 100
for n, (kind, message) in enumerate(lines, 1):
    while not Path("go-%d" % n).exists():
        if time.monotonic() > give_up:
            sys.exit("nobody asked for line %d" % n)
        time.sleep(0.01)
    line = {{"type": kind, "uuid": str(uuid.uuid4()), "sessionId": session,
             "timestamp": "2026-12-01T05:00:%02d.000Z" % n, "message": message}}
    with transcript.open("a") as f:
        f.write(json.dumps(line) + "\\n")
"""


def test_a_running_roots_words_stream_in_and_a_calls_result_lands_in_place(
    tmp_path: Path, browser_page: Any
) -> None:
    page = browser_page
    fake = tmp_path / "claude"
    fake.write_text(STAND_IN.format(python=sys.executable))
    fake.chmod(0o755)
    config = tmp_path / "config.toml"
    config.write_text(f"[runtimes.claude]\ncommand = {json.dumps(str(fake))}\n")
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude-config")}
    work = tmp_path / "work"
    work.mkdir()
    args = ["--config", str(config)]
    with running_daemon(tmp_path, extra_env=env, extra_args=args) as daemon:
        tid = daemon.call("thread/create", {"title": "streaming", "cwd": str(work)})["id"]
        web = open_page(daemon)
        log_in(page, web)
        open_thread(page, web, tid)
        page.wait_for_selector("#connection.live")
        page.fill("#prompt", "build it")
        page.fill("input[name=agent]", "claude")
        page.get_by_role("button", name="Continue").click()
        page.wait_for_selector("#composer-result:has-text('Continued: root #1')")
        page.locator("#transcript li.type-root").wait_for()

        delays = []
        steps = [
            "#transcript li.type-reply:has-text('step one')",
            # the call, waiting for its result (provisional), then the same item with it
            "#transcript li.type-tool[data-provisional]:has-text('make')",
            "#transcript li.type-tool:not([data-provisional]):has-text('→ built ok')",
            "#transcript li.type-reply strong:has-text('all done')",
        ]
        for n, selector in enumerate(steps, 1):
            asked = time.monotonic()
            (work / f"go-{n}").touch()
            page.wait_for_selector(selector)
            delays.append(round(time.monotonic() - asked, 2))
        print("a line written -> shown in the page (s):", delays)
        # the call's result replaced the waiting call in place: one tool item, no provisional
        assert page.locator("#transcript li.type-tool").count() == 1
        wait_for(lambda: page.locator("#transcript li[data-provisional]").count() == 0,
                 what="nothing left provisional")  # fmt: skip
        wait_for(lambda: shown_cursors(page) == every_cursor(daemon, tid) or None,
                 what="the view to hold every item, in order")  # fmt: skip
        screenshot(page, "conversation-streaming")
