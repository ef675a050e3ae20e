"""The WeChat (WeCom) channel on a real alpd against a fake WeCom on 127.0.0.1, both ways: the
tests play WeCom calling alp's callback with messages encrypted per WeCom's spec, and the
fake serves the message API alp sends through.

The URL check answers the decrypted echostr; pairing, a chat turn whose answer comes back
through message/send (one access token, cached, fetched again when WeCom says it expired);
a directive approved by its template card's button; a bad signature, a replayed nonce, an
old timestamp and a wrong receive id are each refused and handle nothing; a stranger is
ignored; the secrets are in no log."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from daemons import StartAlpd, roots
from fake_wecom import (
    AES_KEY,
    AGENT_ID,
    CALLBACK_TOKEN,
    CORP_ID,
    SECRET,
    Callback,
    FakeWecom,
    card_keys,
    fake_wecom,
)
from polling import wait_for
from telegram_setup import echo_thread

from alpd.testing.daemon import DaemonProcess

OWNER = "ann.li"
STRANGER = "mallory"

CONFIG = """
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat > /dev/null; echo ANSWER-$ALP_EXECUTION_ID"]

[channels]
per_minute = 600

[channels.wechat]
corp_id = "{corp_id}"
agent_id = {agent_id}
secret_file = "{dir}/wecom.secret"
token_file = "{dir}/wecom.token"
aes_key_file = "{dir}/wecom.aeskey"
api_url = "{api_url}"
listen = "127.0.0.1:{port}"
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def api() -> Iterator[FakeWecom]:
    with fake_wecom() as server:
        yield server


def secret_files(directory: Path) -> None:
    for name, value in (("secret", SECRET), ("token", CALLBACK_TOKEN), ("aeskey", AES_KEY)):
        path = directory / f"wecom.{name}"
        path.write_text(value + "\n")
        path.chmod(0o600)


def state(d: DaemonProcess) -> dict[str, object]:
    listed = d.call("channel/list", {})
    assert isinstance(listed, dict)
    return next(c for c in listed["channels"] if c["channel"] == "wechat")


@pytest.fixture
def world(start_alpd: StartAlpd, api: FakeWecom, tmp_path: Path) -> tuple[DaemonProcess, Callback]:
    secret_files(tmp_path)
    port = free_port()
    d = start_alpd(CONFIG.format(corp_id=CORP_ID, agent_id=AGENT_ID, dir=tmp_path,
                                 api_url=api.url, port=port))  # fmt: skip
    wait_for(lambda: state(d)["state"] == "serving", what="the callback to serve")
    return d, Callback(f"http://127.0.0.1:{port}/wecom")


def pair(d: DaemonProcess, api: FakeWecom, wecom: Callback) -> None:
    code = d.call("channel/pair", {"channel": "wechat"})
    assert isinstance(code, dict)
    assert wecom.says(OWNER, code["code"])[0] == 200
    api.wait_sent(lambda s: s["touser"] == OWNER and "Paired" in s["text"]["content"])


def test_the_url_check_answers_the_decrypted_echostr(world: tuple[DaemonProcess, Callback]) -> None:
    _, wecom = world
    assert wecom.request("GET", "8123456789") == (200, "8123456789")
    assert wecom.request("GET", "8123456789", bad_signature=True)[0] == 403


def test_a_paired_chat_turn_runs_a_root_and_the_answer_comes_back(
    world: tuple[DaemonProcess, Callback], api: FakeWecom, work: Path
) -> None:
    d, wecom = world
    thread_id = echo_thread(d, work)
    pair(d, api, wecom)
    wecom.says(OWNER, "/use ops")
    api.wait_sent(lambda s: "▶ ops" in s.get("text", {}).get("content", ""))
    wecom.says(OWNER, "what is the disk usage?")
    answer = api.wait_sent(lambda s: "ANSWER-" in s.get("text", {}).get("content", ""))
    assert answer["touser"] == OWNER and answer["agentid"] == AGENT_ID
    root = roots(d, thread_id)[-1]
    assert root["kind"] == "interactive"
    assert root["origin"] == {"door": "wechat", "by": f"wechat:{OWNER}"}
    assert f"ANSWER-{root['id']}" in answer["text"]["content"]
    assert api.token_calls == 1  # one access token, cached

    api.expire_tokens()  # WeCom says 42001: fetched again once, and the message goes
    wecom.says(OWNER, "/ps")
    api.wait_sent(lambda s: s.get("text", {}).get("content", "").startswith("Nothing is running"))
    assert api.token_calls == 2


def test_forged_replayed_stale_and_foreign_callbacks_are_refused(
    world: tuple[DaemonProcess, Callback], api: FakeWecom, work: Path
) -> None:
    d, wecom = world
    thread_id = echo_thread(d, work)
    pair(d, api, wecom)
    wecom.says(OWNER, "/use ops")
    api.wait_sent(lambda s: "▶ ops" in s.get("text", {}).get("content", ""))
    sent_before = len(api.sent)

    assert wecom.says(OWNER, "forged", bad_signature=True)[0] == 403
    assert wecom.says(OWNER, "stale", timestamp=int(time.time()) - 301)[0] == 403
    assert wecom.says(OWNER, "future", timestamp=int(time.time()) + 301)[0] == 403
    assert wecom.says(OWNER, "foreign", receive_id="ww-another-corp")[0] == 403
    assert wecom.says(OWNER, "/threads", nonce="once-only")[0] == 200
    assert wecom.says(OWNER, "replayed", nonce="once-only")[0] == 403
    api.wait_sent(lambda s: "threads" in str(s.get("template_card") or s.get("text")).lower()
                  and s["msgid"] != "")  # fmt: skip
    wecom.says(OWNER, "/ps")
    api.wait_sent(lambda s: s.get("text", {}).get("content", "").startswith("Nothing is running"))
    assert len(roots(d, thread_id)) == 1, "no refused message became a turn"
    texts = api.texts(OWNER)[sent_before:]
    assert not any(word in t for t in texts for word in ("forged", "stale", "future", "foreign"))
    assert "wecom_callback_refused" in d.log_text()


def test_a_stranger_is_ignored(
    world: tuple[DaemonProcess, Callback], api: FakeWecom, work: Path
) -> None:
    d, wecom = world
    thread_id = echo_thread(d, work)
    pair(d, api, wecom)
    for text in ("/use ops", "hello", "ABCDEFGHJK"):
        assert wecom.says(STRANGER, text)[0] == 200  # WeCom must not retry them
    wecom.says(OWNER, "/ps")
    api.wait_sent(lambda s: s.get("text", {}).get("content", "").startswith("Nothing is running"))
    assert api.texts(STRANGER) == []
    assert len(roots(d, thread_id)) == 1
    assert "channel_stranger_ignored" in d.log_text()


def test_a_directive_is_approved_by_its_card_button_and_delivered(
    world: tuple[DaemonProcess, Callback], api: FakeWecom, work: Path
) -> None:
    d, wecom = world
    echo_thread(d, work, "monitor")
    trading = echo_thread(d, work, "trading")
    pair(d, api, wecom)
    d.call("handoff/send", {"target": "trading", "summary": "Sell at 42", "directive": True,
                            "from": "monitor"})  # fmt: skip
    card = api.wait_sent(lambda s: s.get("msgtype") == "template_card")
    keys = card_keys(card)
    assert set(keys) == {"Approve", "Deny"}
    wecom.says(OWNER, "approve")  # typed text approves nothing
    wecom.presses(STRANGER, keys["Approve"])  # nor a stranger's press
    wecom.says(OWNER, "/ps")
    api.wait_sent(lambda s: s.get("text", {}).get("content", "").startswith("Nothing is running"))
    assert len(roots(d, trading)) == 1

    wecom.presses(OWNER, keys["Approve"])
    wait_for(lambda: len(roots(d, trading)) == 2, what="the approved directive's root")
    assert roots(d, trading)[-1]["origin"]["handoffId"]
    wait_for(lambda: any(u["button"]["replace_name"] == "confirmed" for u in api.updates))


def test_the_secrets_are_in_no_log_and_no_listing(
    world: tuple[DaemonProcess, Callback], api: FakeWecom
) -> None:
    d, wecom = world
    pair(d, api, wecom)
    listed = d.cli("channel", "list", "--json").stdout + d.cli("ps", "--json").stdout
    for secret in (SECRET, CALLBACK_TOKEN, AES_KEY):
        assert secret not in listed + d.log_text()
    assert '"channel-wechat"' in listed
