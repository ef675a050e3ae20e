"""The chat doors: Telegram and WeCom (WeChat) as ways into the same threads.

A channel is one module behind the small interface of `door.py` (receive a person's
message, send text and buttons, edit a message); `chat.py` is what every channel shares (who
may speak, commands, turns, answers, approvals) and goes through the dispatcher like the
web page; `manager.py` runs the configured channels with back-off. No SQL here: state lives
in `alpd.store.channels`, through `alpd.services.channels`.
"""
