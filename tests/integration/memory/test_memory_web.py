"""The web page promotes a pinned line to a memory (issue 25, point 2: "`alp memory promote
THREAD PIN` … from the web page and the editors"): the Remember button beside each line of a
thread's context posts `memory/promote`, and the memory cites the thread, its revision, the
line and the run that pinned it, as from the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from webpage import open_page

from alpd.testing.daemon import DaemonProcess


def call(d: DaemonProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = d.call(method, params)
    assert isinstance(result, dict)
    return result


def test_the_page_promotes_a_pinned_line(d: DaemonProcess, tmp_path: Path) -> None:
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    thread = str(call(d, "thread/create", {"title": "pricing", "cwd": str(ws)})["id"])
    done = d.cli(
        "thread", "continue", thread, "--json", "--runtime", "command", "--headless", "--wait",
        "--", "sh", "-c", "alp context pin constraint -- 'prices are stored in cents'",
        cwd=str(ws),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    pinner = json.loads(done.stdout)["execution"]["id"]
    (line,) = call(d, "thread/show", {"threadId": thread})["context"]["snapshot"]["constraints"]
    page = open_page(d)
    cookie = page.log_in()
    shown = page.request("GET", f"/t/{thread}", cookie=cookie)
    assert f'action="/t/{thread}/remember"' in shown.body
    assert f'name="pin" value="{line["id"]}"' in shown.body

    form = urlencode({"pin": line["id"]})
    promoted = page.request(
        "POST", f"/t/{thread}/remember", cookie=cookie, origin=page.origin, form=form
    )
    assert promoted.status == 303, promoted.body[:300]
    (memory,) = call(d, "memory/list", {"cwd": str(ws)})["memories"]
    assert (memory["text"], memory["kind"], memory["threadId"]) == (
        "prices are stored in cents", "convention", thread,
    )  # fmt: skip
    citation = call(d, "memory/show", {"id": memory["id"]})["citation"]
    assert citation["lineText"] == "prices are stored in cents" and pinner in citation["text"]
    version = call(d, "memory/show", {"id": memory["id"]})["versions"][0]
    assert version["provenance"]["door"] == "web"

    wrong = urlencode({"pin": "line_nothing"})
    refused = page.request(
        "POST", f"/t/{thread}/remember", cookie=cookie, origin=page.origin, form=wrong
    )
    assert refused.status == 400 and "INVALID_ARGUMENT" in refused.body
    forged = page.request("POST", f"/t/{thread}/remember", cookie=cookie, form=form)
    assert forged.status == 403
    assert len(call(d, "memory/list", {"cwd": str(ws)})["memories"]) == 1
