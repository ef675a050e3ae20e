"""The `[channels]` tables of config.toml: which chat doors alpd opens, and how loudly they
speak (pure).

    [channels]                                   # what every channel shares (all optional)
    notify = ["reports", "handoffs", "failures", "budget"]   # kinds sent to the chat
    quiet_hours = "23:00-07:30"                  # local time: held, then sent as one message
    per_minute = 20                              # at most this many messages a chat a minute
    approval_timeout = 300                       # seconds a permission request waits (deny)

    [channels.telegram]
    token_file = "~/.alp/telegram.token"         # 0600; or ALP_TELEGRAM_TOKEN
    api_url = "https://api.telegram.org"

    [channels.wechat]                            # WeCom application messages
    corp_id = "ww…"; agent_id = 1000002
    secret_file = "~/.alp/wecom.secret"; token_file = "~/.alp/wecom.token"
    aes_key_file = "~/.alp/wecom.aeskey"
    api_url = "https://qyapi.weixin.qq.com"; listen = "127.0.0.1:8787"

A channel runs only when its table is present. Secrets are never in config.toml: only the
paths of the files holding them (read by the daemon, which refuses a file others may read).
The caller passes the parsed table and a `fail(path, message)` that raises ConfigError.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final, NoReturn

import msgspec

Fail = Callable[[tuple[str, ...], str], NoReturn]

NOTIFY_KINDS: Final = ("reports", "handoffs", "failures", "budget")
SHARED_KEYS: Final = ("notify", "quiet_hours", "per_minute", "approval_timeout")
TELEGRAM_KEYS: Final = ("token_file", "api_url")
WECHAT_KEYS: Final = (
    "corp_id",
    "agent_id",
    "secret_file",
    "token_file",
    "aes_key_file",
    "api_url",
    "listen",
)
TELEGRAM_API: Final = "https://api.telegram.org"
WECOM_API: Final = "https://qyapi.weixin.qq.com"
DEFAULT_LISTEN: Final = "127.0.0.1:8787"
_HOURS: Final = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$")
_LISTEN: Final = re.compile(r"^(\[[0-9a-fA-F:]+\]|[0-9.]+|localhost):(\d{1,5})$")


class TelegramSettings(msgspec.Struct, frozen=True, kw_only=True):
    #: None: the token comes from ALP_TELEGRAM_TOKEN
    token_file: str | None = None
    api_url: str = TELEGRAM_API


class WechatSettings(msgspec.Struct, frozen=True, kw_only=True):
    corp_id: str
    agent_id: int
    secret_file: str
    token_file: str
    aes_key_file: str
    api_url: str = WECOM_API
    listen: str = DEFAULT_LISTEN


class ChannelSettings(msgspec.Struct, frozen=True, kw_only=True):
    telegram: TelegramSettings | None = None
    wechat: WechatSettings | None = None
    notify: tuple[str, ...] = NOTIFY_KINDS
    #: minutes from midnight (start, end); start > end spans midnight; None: never quiet
    quiet_hours: tuple[int, int] | None = None
    per_minute: int = 20
    approval_timeout: float = 300.0


def in_quiet_hours(quiet: tuple[int, int] | None, minute_of_day: int) -> bool:
    """Whether `minute_of_day` (0..1439, local time) falls in the quiet hours."""
    if quiet is None:
        return False
    start, end = quiet
    if start <= end:
        return start <= minute_of_day < end
    return minute_of_day >= start or minute_of_day < end


def parse_channel_settings(fail: Fail, table: object) -> ChannelSettings:
    """ChannelSettings from the `[channels]` table (None when config.toml has none)."""
    if table is None:
        return ChannelSettings()
    if not isinstance(table, dict):
        fail(("channels",), "channels must be a table")
    for key in table:
        if key not in (*SHARED_KEYS, "telegram", "wechat"):
            fail(
                ("channels", key),
                f"unknown key {key!r} in [channels] (known: telegram, wechat, "
                f"{', '.join(SHARED_KEYS)})",
            )
    notify = table.get("notify", list(NOTIFY_KINDS))
    if not isinstance(notify, list) or any(k not in NOTIFY_KINDS for k in notify):
        fail(("channels", "notify"), f"channels.notify lists some of {', '.join(NOTIFY_KINDS)}")
    per_minute = table.get("per_minute", 20)
    if (
        isinstance(per_minute, bool)
        or not isinstance(per_minute, int)
        or not 1 <= per_minute <= 600
    ):
        fail(("channels", "per_minute"), "channels.per_minute must be a whole number, 1 to 600")
    timeout = table.get("approval_timeout", 300)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 1 <= timeout <= 86400
    ):
        fail(("channels", "approval_timeout"), "channels.approval_timeout: seconds, 1 to 86400")
    return ChannelSettings(
        telegram=_telegram(fail, table.get("telegram")),
        wechat=_wechat(fail, table.get("wechat")),
        notify=tuple(notify),
        quiet_hours=_quiet(fail, table.get("quiet_hours")),
        per_minute=per_minute,
        approval_timeout=float(timeout),
    )


def _quiet(fail: Fail, value: object) -> tuple[int, int] | None:
    if value is None:
        return None
    found = _HOURS.match(value) if isinstance(value, str) else None
    if found is None:
        fail(("channels", "quiet_hours"), 'channels.quiet_hours is "HH:MM-HH:MM" (local time)')
    h1, m1, h2, m2 = (int(g) for g in found.groups())
    return h1 * 60 + m1, h2 * 60 + m2


def _strings(fail: Fail, name: str, table: object, keys: tuple[str, ...]) -> dict[str, object]:
    if not isinstance(table, dict):
        fail(("channels", name), f"channels.{name} must be a table")
    for key in table:
        if key not in keys:
            fail(
                ("channels", name, key),
                f"unknown key {key!r} in [channels.{name}] (known: {', '.join(keys)})",
            )
    for key, value in table.items():
        if key != "agent_id" and (not isinstance(value, str) or not value.strip()):
            fail(("channels", name, key), f"channels.{name}.{key} must be a non-empty string")
    for key in ("api_url",):
        url = table.get(key)
        if isinstance(url, str) and not url.startswith(("https://", "http://")):
            fail(("channels", name, key), f"channels.{name}.{key} must be an http(s) URL")
    return table


def _telegram(fail: Fail, table: object) -> TelegramSettings | None:
    if table is None:
        return None
    values = _strings(fail, "telegram", table, TELEGRAM_KEYS)
    return TelegramSettings(
        token_file=values.get("token_file"),  # type: ignore[arg-type]
        api_url=str(values.get("api_url", TELEGRAM_API)).rstrip("/"),
    )


def _wechat(fail: Fail, table: object) -> WechatSettings | None:
    if table is None:
        return None
    values = _strings(fail, "wechat", table, WECHAT_KEYS)
    for key in ("corp_id", "agent_id", "secret_file", "token_file", "aes_key_file"):
        if key not in values:
            fail(("channels", "wechat", key), f"[channels.wechat] needs {key}")
    agent_id = values["agent_id"]
    if isinstance(agent_id, bool) or not isinstance(agent_id, int) or agent_id < 0:
        fail(("channels", "wechat", "agent_id"), "channels.wechat.agent_id is a whole number")
    listen = str(values.get("listen", DEFAULT_LISTEN))
    if _LISTEN.match(listen) is None:
        fail(("channels", "wechat", "listen"), 'channels.wechat.listen is "HOST:PORT"')
    return WechatSettings(
        corp_id=str(values["corp_id"]),
        agent_id=agent_id,
        secret_file=str(values["secret_file"]),
        token_file=str(values["token_file"]),
        aes_key_file=str(values["aes_key_file"]),
        api_url=str(values.get("api_url", WECOM_API)).rstrip("/"),
        listen=listen,
    )


__all__ = [
    "NOTIFY_KINDS",
    "ChannelSettings",
    "TelegramSettings",
    "WechatSettings",
    "in_quiet_hours",
    "parse_channel_settings",
]
