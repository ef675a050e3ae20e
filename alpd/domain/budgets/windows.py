"""A runtime's subscription window, as the runtime reports it, and how full it is now.

Codex writes its backend's rate-limit windows into its rollout (`event_msg/token_count`,
`rate_limits.primary` / `.secondary`: `used_percent`, `window_minutes`, `resets_at` in epoch
seconds) when it is signed in with a subscription; with an API key both are null. Claude Code
writes nothing of the kind offline (docs/budgets.md). A window budget compares the fullest
window that has not reset yet with the budget's share.

Pure: the time is a parameter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

WindowName = Literal["primary", "secondary"]


class RateWindow(msgspec.Struct, frozen=True, kw_only=True):
    """One window of a subscription: how much of it is used (0–100), how long it is, and when
    it resets (epoch seconds; None: not said)."""

    name: WindowName
    used_percent: float
    window_minutes: int | None = None
    resets_at: int | None = None


def fullest(windows: Iterable[RateWindow], now: float) -> float | None:
    """The used percent of the fullest window not reset yet at `now` (epoch seconds); None
    when no window is known (the runtime does not report it, or every window has reset: a
    window past its reset is empty, but how full the new one is is not known yet)."""
    current = [w.used_percent for w in windows if w.resets_at is None or w.resets_at > now]
    return max(current) if current else None


__all__ = ["RateWindow", "WindowName", "fullest"]
