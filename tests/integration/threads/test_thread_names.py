"""A thread is named by its id, a unique id prefix, its exact title or `@last`, at every door:
the socket (any method with a threadId), the CLI, and shell completion (issue 22, point 4)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from daemons import cli_json, settled, start_headless

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess


def create(d: DaemonProcess, work: Path, title: str | None) -> str:
    thread = d.call("thread/create", {"title": title, "cwd": str(work)})
    assert isinstance(thread, dict)
    return str(thread["id"])


def shown_id(d: DaemonProcess, name: str) -> str:
    shown = d.call("thread/show", {"threadId": name})
    assert isinstance(shown, dict)
    return str(shown["thread"]["id"])


def error_of(d: DaemonProcess, method: str, params: dict[str, Any]) -> RpcError:
    with pytest.raises(RpcError) as caught:
        d.call(method, params)
    return caught.value


def test_an_id_a_prefix_and_a_title_name_the_same_thread(d: DaemonProcess, work: Path) -> None:
    pricing = create(d, work, "pricing page")
    create(d, work, "billing")
    assert shown_id(d, pricing) == pricing
    assert shown_id(d, "pricing page") == pricing
    assert shown_id(d, "Pricing Page") == pricing
    assert shown_id(d, pricing[:-3]) == pricing
    assert shown_id(d, pricing.removeprefix("thread_")[:-3]) == pricing
    # every method that takes a threadId takes a name: a write, a read, a filter
    closed = d.call("thread/close", {"threadId": "pricing page"})
    assert isinstance(closed, dict) and closed["id"] == pricing
    listed = d.call("schedule/list", {"threadId": "billing"})
    assert listed == {"schedules": []}


def test_an_ambiguous_name_lists_the_candidates_with_id_and_title(
    d: DaemonProcess, work: Path
) -> None:
    first = create(d, work, "build api")
    second = create(d, work, "build api")
    error = error_of(d, "thread/show", {"threadId": "build api"})
    assert error.name == "THREAD_AMBIGUOUS"
    candidates = error.data["candidates"]
    assert {c["id"] for c in candidates} == {first, second}
    assert {c["title"] for c in candidates} == {"build api"}
    assert "name one by its id" in error.message
    # ids begin with their time: two made together share a prefix, which names both
    same = 0
    while first[same] == second[same]:
        same += 1
    shared = first[:same]
    assert len(shared) > len("thread_")
    error = error_of(d, "thread/show", {"threadId": shared})
    assert error.name == "THREAD_AMBIGUOUS"
    assert {c["id"] for c in error.data["candidates"]} == {first, second}


def test_an_unknown_name_is_not_found_with_a_hint(d: DaemonProcess, work: Path) -> None:
    create(d, work, "pricing page")
    error = error_of(d, "thread/push", {"threadId": "pricing", "text": "x", "source": "t"})
    assert error.name == "THREAD_NOT_FOUND"
    assert "pricing page" in error.message
    assert "alp thread list" in error.message
    assert [c["title"] for c in error.data["candidates"]] == ["pricing page"]
    error = error_of(d, "thread/show", {"threadId": "no such thing"})
    assert error.name == "THREAD_NOT_FOUND" and error.data["candidates"] == []


def test_at_last_is_the_thread_last_touched_in_the_callers_workspace(
    d: DaemonProcess, work: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    older = create(d, work, "older")
    newer = create(d, work, "newer")
    elsewhere = create(d, other, "elsewhere")
    # a write to the older thread makes it the last touched here
    settled(d, start_headless(d, older, work, ["true"])["id"])
    shown = cli_json(d, "thread", "show", "@last", cwd=work)
    assert shown["thread"]["id"] == older
    (work / "deeper").mkdir()
    assert cli_json(d, "thread", "show", "@last", cwd=work / "deeper")["thread"]["id"] == older
    assert cli_json(d, "thread", "show", "@last", cwd=other)["thread"]["id"] == elsewhere
    assert newer not in (older, elsewhere)
    empty = tmp_path / "empty"
    empty.mkdir()
    done = d.cli("thread", "show", "@last", "--json", cwd=str(empty))
    assert done.returncode == 1
    assert "THREAD_NOT_FOUND" in done.stderr and str(empty) in done.stderr


def test_the_cli_takes_a_title_where_it_took_an_id(d: DaemonProcess, work: Path) -> None:
    pricing = create(d, work, "pricing page")
    shown = cli_json(d, "thread", "show", "pricing page", cwd=work)
    assert shown["thread"]["id"] == pricing
    done = d.cli("thread", "context", "pricing", cwd=str(work))
    assert done.returncode == 1
    assert "pricing page" in done.stderr


def test_completion_offers_ids_and_unique_titles_from_the_daemon(
    d: DaemonProcess, work: Path
) -> None:
    pricing = create(d, work, "pricing page")
    twin_a = create(d, work, "twin")
    twin_b = create(d, work, "twin")
    done = d.cli("completion", "--threads", cwd=str(work))
    assert done.returncode == 0, done.stderr
    names = done.stdout.splitlines()
    assert names[0] == "@last"
    assert {pricing, twin_a, twin_b, "pricing page"} <= set(names)
    assert "twin" not in names, "a title two threads share names neither"
    done = d.cli("completion", "--threads", "pri", cwd=str(work))
    assert done.stdout.splitlines() == ["pricing page"]
    script = d.cli("completion", "bash").stdout
    assert "_shtab_alp_thread_show_pos_0_COMPGEN=_alp_complete_threads" in script
    assert json.dumps("alp completion --threads")[1:-1] in script


def test_a_mistyped_title_is_not_found_with_the_close_ones(d: DaemonProcess, work: Path) -> None:
    pricing = create(d, work, "pricing page")
    create(d, work, "billing")
    error = error_of(d, "thread/show", {"threadId": "pricng page"})
    assert error.name == "THREAD_NOT_FOUND"
    assert f"did you mean {pricing} 'pricing page' (open)?" in error.message
    assert [c["id"] for c in error.data["candidates"]] == [pricing]
    done = d.cli("thread", "show", "Pricing Pgae")
    assert done.returncode == 1
    assert "THREAD_NOT_FOUND" in done.stderr and "did you mean" in done.stderr
    assert "'pricing page'" in done.stderr and "billing" not in done.stderr
    # words a title contains still come first; nothing alike offers nothing
    assert "titles that contain it" in error_of(d, "thread/show", {"threadId": "pric"}).message
    far = error_of(d, "thread/show", {"threadId": "kubernetes upgrade"})
    assert "did you mean" not in far.message and far.data["candidates"] == []
