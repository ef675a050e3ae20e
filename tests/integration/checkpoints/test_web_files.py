"""The thread page shows what the last root did to the files and offers to undo it, asking
first: a page lists the plan, and only its form's POST restores (issue 27, point 2)."""

from __future__ import annotations

import html
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_file_checkpoints import call, new_thread, run_root, seed
from webpage import open_page

from alpd.testing.daemon import DaemonProcess, running_daemon


@pytest.fixture
def d(tmp_path: Path) -> Iterator[DaemonProcess]:
    with running_daemon(tmp_path) as daemon:
        yield daemon


def test_the_page_shows_the_diff_and_restores_only_when_confirmed(
    d: DaemonProcess, tmp_path: Path
) -> None:
    work = tmp_path / "web"
    seed(work)
    thread_id = new_thread(d, work)
    run_root(d, thread_id, "printf 'root edit\\n' > gone.txt; printf n > made.txt", work)
    page = open_page(d)
    cookie = page.log_in()

    shown = page.request("GET", f"/t/{thread_id}", cookie=cookie)
    assert shown.status == 200
    body = html.unescape(shown.body)
    assert "made.txt" in body and "+root edit" in body and "Undo these file changes" in body

    asked = page.request("GET", f"/t/{thread_id}/restore", cookie=cookie)
    assert asked.status == 200
    assert "delete</code> made.txt" in asked.body and "Restore these files" in asked.body
    assert (work / "made.txt").exists()  # asking changed nothing

    done = page.request("POST", f"/t/{thread_id}/restore", cookie=cookie, origin=page.origin)
    assert done.status == 303, done.body[:300]
    assert not (work / "made.txt").exists()
    assert (work / "gone.txt").read_text() == "to be deleted\n"
    assert call(d, "thread/diff", {"threadId": thread_id})["step"] == "restore-1"

    (work / "gone.txt").write_text("a later edit")
    refused = page.request("POST", f"/t/{thread_id}/restore", cookie=cookie, origin=page.origin)
    assert refused.status == 409 and "WORKSPACE_CHANGED" in refused.body
    assert (work / "gone.txt").read_text() == "a later edit"
