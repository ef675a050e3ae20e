"""WeCom (WeChat Work) application messages: not written yet."""

from __future__ import annotations

from alpd.channels.door import Channel, ChannelBroken
from alpd.domain.channel_settings import WechatSettings
from alpd.services.context import Daemon


def make_wecom(d: Daemon, settings: WechatSettings) -> Channel:
    raise ChannelBroken("the wechat channel is not built yet")
