"""A pin is at most 4096 bytes (UTF-8, after trimming): 4096 is pinned, 4097 refused with a
message that says what to do — counted in bytes, not characters."""

from __future__ import annotations

from pathlib import Path

from daemons import settled, start_headless

from alpd.testing.daemon import DaemonProcess


def test_a_4096_byte_pin_is_taken_and_a_4097_byte_one_refused(d: DaemonProcess, work: Path) -> None:
    fits = "é" * 2048  # 2048 characters, 4096 bytes
    over = fits + "a"  # 4097 bytes
    (work / "fits").write_text(fits)
    (work / "over").write_text(over)
    script = (
        'alp context pin decision -- "$(cat fits)" || exit 3; '
        'alp context pin decision -- "$(cat over)" 2> refused; echo $? > code'
    )
    thread_id = str(d.call("thread/create", {"title": "pins", "cwd": str(work)})["id"])  # type: ignore[index]
    execution = start_headless(d, thread_id, work, ["sh", "-c", script])
    assert settled(d, execution["id"])["outcome"] == "completed"
    assert (work / "code").read_text().strip() != "0"
    refused = (work / "refused").read_text()
    assert "at most 4096 bytes" in refused, refused
    context = d.call("thread/context", {"threadId": thread_id})
    assert isinstance(context, dict)
    texts = [line["text"] for line in context["snapshot"]["decisions"]]
    assert texts == [fits]
