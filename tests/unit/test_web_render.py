"""The thread page's template on results with and without the optional parts (a recap,
handoffs, clear/undo steps), escaped: rendered directly, no daemon."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import msgspec

from alpd.web.conversation import page_attributes
from alpd.web.render import render
from protocol import messages as m

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
AT = "2026-11-30T11:00:00.000Z"


def shown(**extra: Any) -> m.ThreadShowResult:
    thread = m.Thread(
        id="thread_1", title="t <1>", workspace="/w", status="open", revision=1,
        context_revision=1, owner_uid=0, created_at=AT, updated_at=AT,
    )  # fmt: skip
    snapshot = {"decisions": [{"id": "ln_1", "text": "use <sqlite>", "sourceExecutionId": "e_1"}]}
    base = m.ThreadShowResult(
        thread=thread,
        roots=[],
        context=m.ContextResult(thread_id="thread_1", revision=1, digest="d", snapshot=snapshot),
        history=m.HistorySummary(level="complete"),
    )
    return msgspec.structs.replace(base, **extra)


def page(result: m.ThreadShowResult) -> str:
    response = render(
        "thread.html", title="t", shown=result, schedules=[], snapshot=result.context.snapshot,
        form={}, live="/events", href="/t/thread_1", now=NOW, transcript_error=None, items=[],
        roots={}, attributes=page_attributes(None),
    )  # fmt: skip
    return bytes(response.body).decode()


def test_without_a_recap_the_page_has_no_recap_box() -> None:
    html = page(shown())
    assert 'class="recap"' not in html and 'id="handoffs"' not in html
    assert "use &lt;sqlite&gt;" in html and 'href="#root-e_1"' in html


def test_a_recap_shows_headline_gist_and_open_tasks_marked_derived() -> None:
    recap = m.ThreadRecap(
        thread_id="thread_1", state=m.RecapState(available=True, summariser="runtime"),
        headline="Ship <the> page", gist="A gist.", open_tasks=["write docs"], source_revision=1,
    )  # fmt: skip
    html = page(shown(recap=recap))
    assert "Ship &lt;the&gt; page" in html and "A gist." in html and "<li>write docs</li>" in html
    assert "derived by a model" in html and "context rev 1" in html


def test_a_recap_that_cannot_be_made_says_how_to_turn_it_on() -> None:
    state = m.RecapState(
        available=False, summariser="runtime", reason="no summariser.", hint="set [recap] model"
    )
    html = page(shown(recap=m.ThreadRecap(thread_id="thread_1", state=state)))
    assert "set [recap] model" in html


def test_clear_and_undo_steps_are_listed_with_the_context() -> None:
    step = m.ContextStep(kind="clear", revision=2, replaced_revision=1, by="uid:0", door="web",
                         at=AT)  # fmt: skip
    assert "clear at rev 2 (web, 1 h ago)" in page(shown(steps=[step]))
