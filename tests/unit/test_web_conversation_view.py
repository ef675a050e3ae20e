"""The conversation view's pure parts: the Markdown subset (safe for any text: only its own
tags, only http(s) links, every character of the text kept), who an item is from, its time in
the one format, what is folded, what may still change, and what the composer says."""

from __future__ import annotations

import html
from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser

from hypothesis import given
from hypothesis import strategies as st

from alpd.web import conversation as c
from alpd.web.conversation_html import item_html
from alpd.web.markdown import ALLOWED_TAGS, render_markdown
from alpd.web.render import render
from alpd.web.view import local_time
from protocol import messages as m


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text, of a piece of HTML."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(markup: str) -> Tags:
    tags = Tags()
    tags.feed(markup)
    tags.close()
    return tags


def attributes_are_safe(tag: str, attrs: list[tuple[str, str | None]]) -> bool:
    for name, value in attrs:
        if tag == "a" and name == "href":
            if not (value or "").startswith(("http://", "https://")):
                return False
        elif tag == "a" and name == "rel":
            continue
        elif tag == "code" and name == "class":
            if not (value or "").startswith("language-"):
                return False
        else:
            return False
    return True


#: the tags an item's own markup (alpd.web.conversation_html) writes around its text
ITEM_TAGS = frozenset({"li", "div", "span", "time", "details", "summary", "button"})

MARKDOWNISH = st.lists(
    st.sampled_from([*"ab <>&\"'`*_[]()#->~1.:/\n\t=", "http://", "javascript:", "```", "](h"]),
    max_size=80,
).map("".join)


@given(MARKDOWNISH | st.text(max_size=200))
def test_any_text_renders_to_only_its_own_tags_and_http_links(text: str) -> None:
    tags = parsed(str(render_markdown(text)))
    for tag, attrs in tags.tags:
        assert tag in ALLOWED_TAGS, (text, tag)
        assert attributes_are_safe(tag, attrs), (text, tag, attrs)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_no_visible_character_of_the_text_is_lost(text: str) -> None:
    """Markdown's own marks may go; every other non-space character stays, in order."""
    shown = "".join(parsed(str(render_markdown(text))).text)
    marks = set("*`#->_~[]()+.0123456789 \t\r\n\f\v\x0b\x1c\x1d\x1e\x1f\x85\u2028\u2029")
    wanted = [ch for ch in text if ch not in marks and not ch.isspace()]
    kept = iter(shown)
    assert all(ch in kept for ch in wanted), (text, shown)


def test_code_blocks_are_kept_verbatim_with_their_language() -> None:
    text = "Here:\n\n```python\nif a < b:\n    print('**not bold**')\n```\nafter"
    shown = str(render_markdown(text))
    kept = "if a &lt; b:\n    print(&#39;**not bold**&#39;)"
    assert f'<pre><code class="language-python">{kept}</code></pre>' in shown
    assert "<strong>" not in shown and shown.endswith("<p>after</p>")


def test_inline_marks_links_and_lists() -> None:
    text = "**b** *i* `x<y>` [doc](https://example.com/a?b=1&c=2)\n- one\n- two"
    shown = str(render_markdown(text))
    assert "<strong>b</strong> <em>i</em> <code>x&lt;y&gt;</code>" in shown
    link = '<a href="https://example.com/a?b=1&amp;c=2" rel="noopener noreferrer nofollow">'
    assert f"{link}doc</a>" in shown
    assert "<ul><li>one</li><li>two</li></ul>" in shown


def test_a_script_or_a_javascript_link_stays_text() -> None:
    text = '<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror="y">'
    shown = str(render_markdown(text))
    assert "<script" not in shown and "<img" not in shown and "href" not in shown
    assert "&lt;script&gt;" in shown and "[x](javascript:alert(1))" in shown


def item(**fields: object) -> m.TranscriptItem:
    return m.TranscriptItem(**{"cursor": "t1.x", "type": "reply", **fields})  # type: ignore[arg-type]


def test_who_speaks() -> None:
    assert c.speaker(item(type="prompt", speaker="person")) == "You"
    assert c.speaker(item(speaker="assistant", model="opus")) == "Assistant · opus"
    assert c.speaker(item(type="push", source="disk-alert")) == "push · disk-alert"
    assert c.speaker(item(type="handoff-in", source='"pricing"')) == 'handoff from "pricing"'
    assert c.speaker(item(type="report", status="failed")) == "report · failed"


def test_a_time_of_today_drops_its_date_as_the_cli_does() -> None:
    now = datetime.now(UTC)
    today = now.isoformat()
    whole = local_time(today)
    assert c.item_time(today, now) == whole.split(" ", 1)[1]
    earlier = (now - timedelta(days=3)).isoformat()
    assert c.item_time(earlier, now) == local_time(earlier)
    assert c.item_time(None, now) == "—" and c.item_time("garbage", now) == "garbage"


def test_tool_calls_are_one_line_and_long_text_is_folded() -> None:
    tool = m.TranscriptTool(name="Bash", input='{"command": "make\\ntest"}', result="ok\n")
    assert c.tool_line(tool) == '⚙ Bash {"command": "make\\ntest"} → ok'
    assert c.tool_line(m.TranscriptTool(name="Read", input="a")) == "⚙ Read a …"
    failed = m.TranscriptTool(name="Bash", input="x", result="boom", is_error=True)
    assert c.tool_line(failed) == "⚙ Bash x ✗ boom"
    assert not c.folded("short") and c.folded("x\n" * c.FOLD_LINES) and c.folded("x" * 2000)


def root(outcome: str | None) -> m.TranscriptRoot:
    return m.TranscriptRoot(
        id="exec_1", sequence=1, runtime="claude", agent="claude", kind="interactive",
        origin=m.Origin(door="cli", by="uid:0"), status="settled" if outcome else "running",
        outcome=outcome, cost_usd=0.031,  # type: ignore[arg-type]
    )  # fmt: skip


def test_what_may_still_change_is_provisional() -> None:
    pending = item(type="tool", tool=m.TranscriptTool(name="Bash", input="x"), root_id="exec_1")
    assert c.provisional(pending, root(None)) and not c.provisional(pending, root("failed"))
    assert c.provisional(item(type="push", status="queued"))
    assert not c.provisional(item(type="push", status="failed"))
    assert not c.provisional(item(type="push", status="delivered", root_id="exec_1"))
    assert c.provisional(item(type="recap")) and not c.provisional(item())
    assert c.root_status(root("completed")) == "completed · $0.03"


def execution(sequence: int) -> m.Execution:
    return m.Execution(
        id="exec_9", root_id="exec_9", runtime="claude", agent="claude", kind="push",
        origin=m.Origin(door="web", by="uid:0"), headless=True, status="running",
        policy_hash="h", cwd="/w", created_at="2026-12-02T00:00:00Z", sequence=sequence,
    )  # fmt: skip


def test_the_composer_says_what_became_of_the_message() -> None:
    started = m.PushResult(delivery_id=1, status="started", waiting=0, execution=execution(2))
    assert c.pushed(started) == "Pushed: the thread was idle; root #2 (exec_9) reads it."
    queued = m.PushResult(delivery_id=2, status="queued", waiting=2)
    assert c.pushed(queued) == (
        "Pushed: queued for one round after the running root settles (2 waiting)."
    )
    assert "takes it while it works" in c.pushed(m.PushResult(1, "injecting", 0))
    assert "joins the round" in c.pushed(m.PushResult(1, "coalesced", 1))


def test_an_item_list_renders_escaped_with_its_folds() -> None:
    tool = m.TranscriptTool(name="Bash", input="ls", result="a\nb", truncated=True)
    items = [
        item(type="prompt", speaker="person", text="<b>hi</b>", at="2026-12-01T10:00:00Z"),
        item(cursor="t1.y", speaker="assistant", text="**yes** <i>"),
        item(cursor="t1.z", type="tool", speaker="tool", tool=tool),
    ]
    page = m.TranscriptResult(thread_id="thread_1", items=items, roots=[], next="t1.z")
    context = {"items": items, "roots": {}, "attributes": c.page_attributes(page)}
    body = bytes(render("transcript.html", page=page, now=datetime.now(UTC), **context).body)
    body = body.decode()
    assert "&lt;b&gt;hi&lt;/b&gt;" in body and "<strong>yes</strong> &lt;i&gt;" in body
    assert '<details class="tool"><summary>⚙ Bash ls → a b</summary>' in body
    assert 'class="secondary whole"' in body and 'data-next="t1.z"' in body
    assert html.unescape(body).count("data-cursor=") == 3


@given(
    st.sampled_from(["prompt", "reply", "push", "report", "root", "recap", "error"]),
    st.text(max_size=60),
    st.lists(st.text(max_size=8), max_size=2),
)
def test_an_item_is_escaped_and_shows_controls_as_pictures_whatever_it_holds(
    kind: str, text: str, labels: list[str]
) -> None:
    said = item(type=kind, text=text, labels=labels, cursor='t1."x', source=text or None)
    shown = item_html(said, None, datetime.now(UTC).date())
    tags = parsed(shown)
    assert tags.tags[0][0] == "li"
    assert all(tag in ITEM_TAGS | ALLOWED_TAGS for tag, _ in tags.tags), tags.tags
    assert dict(tags.tags[0][1])["data-cursor"] == 't1."x'
    visible = "".join(tags.text)
    controls = [ch for ch in visible if ch == "\x7f" or (ch < " " and ch not in "\t\n\f\r")]
    assert not controls
    assert "\x00" not in shown and "<script" not in shown.lower()
