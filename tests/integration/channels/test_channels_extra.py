"""alp installed without its `channels` extra: alpd starts, and a configured chat door says
which library is missing and the extra to install (in `alp channel list` and `alp doctor`),
instead of a bare ImportError."""

from __future__ import annotations

from pathlib import Path

import pytest
from daemons import StartAlpd
from polling import wait_for

HIDE = '''
import sys

class _NoChannelsExtra:
    """alp installed without its `channels` extra: these cannot be imported."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ({hidden}):
            raise ModuleNotFoundError(f"No module named {{name!r}} (hidden by the test)", name=name)
        return None

sys.meta_path.insert(0, _NoChannelsExtra())
'''

CONFIG = {
    "telegram": '[channels.telegram]\ntoken_file = "{dir}/telegram.token"\n'
    'api_url = "http://127.0.0.1:9"\n',
    "wechat": '[channels.wechat]\ncorp_id = "ww1"\nagent_id = 1000002\n'
    'secret_file = "{dir}/wecom.secret"\ntoken_file = "{dir}/wecom.token"\n'
    'aes_key_file = "{dir}/wecom.aeskey"\napi_url = "http://127.0.0.1:9"\n'
    'listen = "127.0.0.1:9"\n',
}


@pytest.mark.parametrize(
    ("channel", "hidden", "named"),
    [
        ("telegram", '"telegram"', "python-telegram-bot"),
        ("wechat", '"httpx", "cryptography"', "httpx"),
        ("wechat", '"cryptography"', "cryptography"),
    ],
)
def test_a_missing_library_names_the_extra_to_install(
    start_alpd: StartAlpd, tmp_path: Path, channel: str, hidden: str, named: str
) -> None:
    for name in ("telegram.token", "wecom.secret", "wecom.token", "wecom.aeskey"):
        (tmp_path / name).write_text("x" * 43 + "\n")
        (tmp_path / name).chmod(0o600)
    hide = tmp_path / "no-extra"
    hide.mkdir()
    (hide / "sitecustomize.py").write_text(HIDE.format(hidden=hidden))
    d = start_alpd(CONFIG[channel].format(dir=tmp_path), extra_env={"PYTHONPATH": str(hide)})

    def state() -> dict[str, str] | None:
        listed = d.call("channel/list", {})
        assert isinstance(listed, dict)
        found = next(c for c in listed["channels"] if c["channel"] == channel)
        return found if found["state"] == "failing" else None

    failing = wait_for(state, what="the door to fail", timeout=20)
    assert failing is not None
    detail = failing["detail"]
    assert f"the {channel} door needs {named}, which is not installed" in detail
    assert "pip install 'alp[channels]'" in detail and "ImportError" not in detail
    doctor = d.cli("doctor")
    assert "alp[channels]" in doctor.stdout + doctor.stderr
    assert d.call("thread/list", {}) is not None  # alpd itself works on
