"""The thread page's template on results with and without the optional parts (a recap,
handoffs), escaped: rendered directly, no daemon."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

from alpd.web.render import render
from protocol import messages as m

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
AT = "2026-11-30T11:00:00.000Z"


def shown(**extra: Any) -> Any:
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
    fields = {name: getattr(base, name) for name in base.__struct_fields__}
    return SimpleNamespace(**{**fields, **extra})


def page(result: Any) -> str:
    response = render(
        "thread.html", title="t", shown=result, schedules=[], snapshot=result.context.snapshot,
        form={}, live="/events", href="/t/thread_1", now=NOW,
    )  # fmt: skip
    return bytes(response.body).decode()


def test_without_a_recap_the_page_has_no_recap_box() -> None:
    html = page(shown())
    assert 'class="recap"' not in html
    assert "use &lt;sqlite&gt;" in html and 'href="#root-e_1"' in html


def test_a_recap_shows_headline_gist_and_open_tasks_marked_derived() -> None:
    recap = SimpleNamespace(
        headline="Ship <the> page", gist="A gist.", open_tasks=["write docs"], refreshing=False,
        source_revision=1, state=SimpleNamespace(available=True, reason=None, hint=None),
    )  # fmt: skip
    html = page(shown(recap=recap))
    assert "Ship &lt;the&gt; page" in html and "A gist." in html and "<li>write docs</li>" in html
    assert "derived by a model" in html and "context rev 1" in html


def test_a_recap_that_cannot_be_made_says_how_to_turn_it_on() -> None:
    state = SimpleNamespace(available=False, reason="no summariser.", hint="set [recap] model")
    recap = SimpleNamespace(
        headline=None, gist=None, open_tasks=[], refreshing=False, source_revision=None,
        state=state,
    )  # fmt: skip
    assert "set [recap] model" in page(shown(recap=recap))
