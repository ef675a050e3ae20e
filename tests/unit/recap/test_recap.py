"""The recap's pure rules: bounded, secret-filtered input; validated, capped output; gating,
back-off and single flight; the `[recap]` table and whether a summariser is available."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from alpd.domain.config_fields import ConfigError
from alpd.domain.recap.config import RecapSettings, recap_availability
from alpd.domain.recap.gate import (
    Activity,
    Flight,
    backoff_seconds,
    on_finish,
    on_trigger,
    refresh_verdict,
)
from alpd.domain.recap.summary import (
    ENTRY_CHARS,
    GIST_MAX,
    HEADLINE_MAX,
    OPEN_TASKS_MAX,
    Recap,
    RecapEntry,
    RecapRejected,
    build_summary_input,
    parse_recap_reply,
)
from alpd.domain.runs.agents import parse_agents_config

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=3000)


@st.composite
def entry_lists(draw: st.DrawFn) -> list[RecapEntry]:
    count = draw(st.integers(0, 60))
    return [
        RecapEntry(
            id=index + 1,
            sequence=draw(st.integers(1, 5)),
            role=draw(st.sampled_from(["user", "assistant", "tool"])),
            kind=draw(st.sampled_from(["prompt", "reply", "tool_call", "tool_result"])),
            text=draw(texts),
            tool_name=draw(st.none() | st.just("Bash")),
            tool_input=draw(st.none() | texts),
        )
        for index in range(count)
    ]


@given(entries=entry_lists(), context=texts, chars=st.integers(2000, 40_000))
@settings(max_examples=120, deadline=None)
@example(  # the marker of left-out entries once pushed the newest line past the bound
    entries=[
        RecapEntry(id=n, sequence=s, role="user", kind="prompt", text="")
        for n, s in ((1, 1), (2, 1), (3, 2))
    ],
    context="",
    chars=3466,
)
def test_the_input_never_exceeds_its_bound_and_keeps_the_newest(
    entries: list[RecapEntry], context: str, chars: int
) -> None:
    previous = Recap(headline="h" * 80, gist="g" * 1200, open_tasks=("t" * 200,) * 10)
    made = build_summary_input(previous, context, entries, input_chars=chars)
    assert len(made.text) <= chars
    assert made.entries + made.omitted == len(entries)
    assert made.last_entry_id == (entries[-1].id if entries else None)
    if entries and made.entries:
        # what is shown is a suffix: the newest entries, never a gap
        assert f"[root {entries[-1].sequence}]" in made.text


@given(entries=entry_lists(), noise=texts)
@settings(max_examples=80, deadline=None)
def test_no_secret_reaches_the_input(entries: list[RecapEntry], noise: str) -> None:
    leaky = [
        *entries,
        RecapEntry(
            id=10_000,
            sequence=1,
            role="tool",
            kind="tool_result",
            text=f"{noise[:50]} aws_access_key_id = {AWS_KEY}",
            output_tail=f"export TOKEN={AWS_KEY}",
        ),
    ]
    made = build_summary_input(None, f"pinned {AWS_KEY}", leaky, input_chars=16_000)
    assert AWS_KEY not in made.text
    assert "[REDACTED:" in made.text


def test_a_long_entry_is_cut_and_older_entries_are_counted_when_left_out() -> None:
    entries = [
        RecapEntry(id=i, sequence=1, role="user", kind="prompt", text=f"{i} " + "x" * 5000)
        for i in range(1, 40)
    ]
    made = build_summary_input(None, "", entries, input_chars=10_000)
    lines = [line for line in made.text.splitlines() if line.startswith("[root")]
    assert all(len(line) <= ENTRY_CHARS + 40 for line in lines)
    assert made.omitted > 0 and f"({made.omitted} older entries left out)" in made.text
    assert lines[-1].startswith("[root 1] user prompt: 39 ")


def reply(**fields: object) -> str:
    return "Here it is:\n```json\n" + json.dumps(fields) + "\n```"


def test_a_valid_reply_is_kept_whole() -> None:
    recap = parse_recap_reply(
        reply(headline="Bench rerun", gist="Four models left.", openTasks=["rerun llama"])
    )
    assert recap == Recap("Bench rerun", "Four models left.", ("rerun llama",))


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"headline": "x" * (HEADLINE_MAX + 1), "gist": "g"}, "headline has 81"),
        ({"headline": "h", "gist": "g" * (GIST_MAX + 1)}, "gist has 1201"),
        ({"headline": "h", "gist": "g", "openTasks": ["t"] * (OPEN_TASKS_MAX + 1)}, "11 open"),
        ({"headline": "h", "gist": "g", "openTasks": ["t" * 201]}, "longer than 200"),
        ({"headline": "", "gist": "g"}, "headline is missing"),
        ({"gist": "g"}, "headline is missing"),
        ({"headline": "h", "gist": "g", "openTasks": "one"}, "not a list"),
    ],
)
def test_a_reply_over_a_cap_or_malformed_is_discarded(
    fields: dict[str, object], reason: str
) -> None:
    with pytest.raises(RecapRejected, match=reason):
        parse_recap_reply(reply(**fields))


@pytest.mark.parametrize("text", ["no json here", "{not json}", "[1, 2]", '"just a string"'])
def test_a_reply_without_an_object_is_discarded(text: str) -> None:
    with pytest.raises(RecapRejected):
        parse_recap_reply(text)


@given(headline=texts, gist=texts, tasks=st.lists(texts, max_size=14))
@settings(max_examples=150, deadline=None)
def test_whatever_is_kept_is_within_its_caps_and_filtered(
    headline: str, gist: str, tasks: list[str]
) -> None:
    text = json.dumps({"headline": headline + AWS_KEY[:0], "gist": gist, "openTasks": tasks})
    try:
        recap = parse_recap_reply(text)
    except RecapRejected:
        return
    assert 0 < len(recap.headline) <= HEADLINE_MAX and "\n" not in recap.headline
    assert 0 < len(recap.gist) <= GIST_MAX + 40
    assert len(recap.open_tasks) <= OPEN_TASKS_MAX


def test_a_secret_the_model_echoes_is_filtered_from_the_recap() -> None:
    recap = parse_recap_reply(reply(headline="keys", gist=f"key {AWS_KEY}", openTasks=[AWS_KEY]))
    assert AWS_KEY not in recap.gist and AWS_KEY not in recap.open_tasks[0]


# gating and back-off

SETTINGS = RecapSettings(min_roots=2, min_entries=12, min_interval_seconds=120)


def test_nothing_new_is_never_refreshed() -> None:
    verdict = refresh_verdict(Activity(new_entries=0, new_roots=5), SETTINGS, NOW)
    assert verdict.action == "skip"


def test_below_both_thresholds_waits_for_more_activity() -> None:
    verdict = refresh_verdict(Activity(new_entries=3, new_roots=1), SETTINGS, NOW)
    assert verdict.action == "skip" and "waits for 2 roots or 12 entries" in verdict.reason


@given(
    entries=st.integers(0, 100),
    roots=st.integers(0, 10),
    since=st.none() | st.floats(0, 10_000),
    failures=st.integers(0, 40),
    failed=st.floats(0, 100_000),
)
@settings(max_examples=300)
def test_a_refresh_happens_only_after_real_activity_and_never_too_soon(
    entries: int, roots: int, since: float | None, failures: int, failed: float
) -> None:
    activity = Activity(
        new_entries=entries,
        new_roots=roots,
        last_refresh_at=None if since is None else NOW - timedelta(seconds=since),
        failures=failures,
        last_failure_at=NOW - timedelta(seconds=failed),
    )
    verdict = refresh_verdict(activity, SETTINGS, NOW)
    if verdict.action == "refresh":
        assert entries > 0 and (roots >= 2 or entries >= 12)
        assert since is None or since >= 120
        assert failed >= backoff_seconds(failures, SETTINGS)
    if verdict.action == "later":
        assert verdict.at is not None and verdict.at > NOW
        # at that time, with nothing else changed, it is due
        later = refresh_verdict(activity, SETTINGS, verdict.at)
        assert later.action == "refresh"


@given(failures=st.integers(0, 200))
def test_backoff_doubles_and_is_capped(failures: int) -> None:
    pause = backoff_seconds(failures, SETTINGS)
    assert 0 <= pause <= SETTINGS.max_backoff_seconds
    if failures >= 1:
        assert pause >= min(SETTINGS.backoff_seconds, SETTINGS.max_backoff_seconds)
        assert backoff_seconds(failures + 1, SETTINGS) >= pause


# single flight


@given(events=st.lists(st.sampled_from(["trigger", "finish"]), max_size=200))
def test_single_flight_runs_one_refresh_and_owes_at_most_one_follow_up(events: list[str]) -> None:
    flight, starts, runs = Flight(), 0, 0
    for event in events:
        if event == "trigger":
            flight, action = on_trigger(flight)
            starts += action == "start"
            runs += action == "start"
        elif flight.running:
            flight, again = on_finish(flight)
            runs += again
        assert flight.running or not flight.follow_up
    # a follow-up is owed only while a refresh runs, and there is never more than one
    assert starts <= events.count("trigger")
    assert runs <= events.count("finish") + 1


def test_twenty_triggers_during_a_refresh_leave_one_follow_up() -> None:
    flight, actions = Flight(), []
    for _ in range(20):
        flight, action = on_trigger(flight)
        actions.append(action)
    assert actions == ["start", "follow-up", *["ignored"] * 18]
    flight, again = on_finish(flight)
    assert again and flight == Flight(running=True)
    assert on_finish(flight) == (Flight(), False)


# the [recap] table


def test_the_recap_table_is_parsed_with_defaults() -> None:
    config = parse_agents_config(
        '[recap]\nsummariser = "api"\nminRoots = 3\napiUrl = "http://127.0.0.1:9"\n'
        '[agents.quiet]\nruntime = "claude"\nrecap = false\n',
        source="c.toml",
    )
    assert config.recap.summariser == "api" and config.recap.min_roots == 3
    assert config.recap.model_name() == "claude-haiku-4-5"
    assert config.recap.min_entries == RecapSettings().min_entries
    assert config.agents["quiet"].recap is False and config.agents["claude"].recap is True


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("[recap]\nsummarizer = 'api'\n", 2, "unknown key 'summarizer'"),
        ("[recap]\nsummariser = 'cloud'\n", 2, 'must be "runtime" or "api"'),
        ("[recap]\nminRoots = -1\n", 2, "whole number >= 0"),
        ("[recap]\ninputChars = 10\n", 1, "at least 2000"),
        ("[recap]\napiUrl = 'http://example.com'\n", 1, "https://"),
        ("[agents.x]\nruntime = 'claude'\nrecap = 'no'\n", 3, "true or false"),
    ],
)
def test_a_bad_recap_table_names_the_line(text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        parse_agents_config(text, source="c.toml")
    assert caught.value.line is not None and caught.value.line >= line - 1


def test_without_claude_the_recap_is_off_and_says_how_to_turn_it_on() -> None:
    state = recap_availability(RecapSettings(), claude_program=None, environ={})
    assert not state.available
    assert state.reason is not None and "`claude`" in state.reason
    assert state.hint is not None and 'summariser = "api"' in state.hint


def test_the_api_without_a_key_is_off_and_names_the_variable() -> None:
    settings_ = RecapSettings(summariser="api", api_key_env="MY_KEY")
    assert not recap_availability(settings_, claude_program="/bin/claude", environ={}).available
    on = recap_availability(settings_, claude_program=None, environ={"MY_KEY": "k"})
    assert on.available


def test_turned_off_in_config_says_so() -> None:
    state = recap_availability(
        RecapSettings(enabled=False), claude_program="/bin/claude", environ={}
    )
    assert not state.available and state.hint is not None and "enabled = true" in state.hint
