"""WeCom's replay guards hold across a restart of alpd: a callback's nonce and a message id
are kept in the database, so a replayed callback right after a restart is refused (403) and
a retried message (same MsgId, fresh nonce) is not handled again."""

from __future__ import annotations

from pathlib import Path

from daemons import roots
from fake_wecom import Callback, FakeWecom, text_xml
from polling import wait_for
from telegram_setup import echo_thread
from test_wecom import OWNER, api, pair, state, world  # noqa: F401 (fixtures)

from alpd.testing.daemon import DaemonProcess


def content(sent: dict[str, object]) -> str:
    text = sent.get("text")
    return str(text.get("content", "")) if isinstance(text, dict) else ""


def test_a_replay_or_a_retry_after_a_restart_is_not_handled(
    world: tuple[DaemonProcess, Callback],  # noqa: F811
    api: FakeWecom,  # noqa: F811
    work: Path,
) -> None:
    d, wecom = world
    thread_id = echo_thread(d, work)
    pair(d, api, wecom)
    wecom.says(OWNER, "/use ops")
    api.wait_sent(lambda s: "▶ ops" in content(s))
    wecom.msg_id += 1
    message = text_xml(OWNER, "how full is the disk?", wecom.msg_id)
    assert wecom.request("POST", message, nonce="before-restart")[0] == 200
    api.wait_sent(lambda s: "ANSWER-" in content(s))
    wait_for(lambda: all(r["status"] == "settled" for r in roots(d, thread_id)))
    d.stop()

    d.start()
    wait_for(lambda: state(d)["state"] == "serving", what="the callback to serve again")
    assert wecom.request("POST", message, nonce="before-restart")[0] == 403  # a replay
    assert wecom.request("POST", message)[0] == 200  # WeCom's retry: answered, not handled
    assert "seen before" in d.log_text()
    wecom.says(OWNER, "/ps")
    api.wait_sent(lambda s: content(s).startswith("Nothing is running"))
    assert len(roots(d, thread_id)) == 2, "the first root and one chat turn, not two"
    assert sum("ANSWER-" in t for t in api.texts(OWNER)) == 1
