"""Approvals from the phone: a run's permission request, and the one-time nonces of the
buttons that answer it (and a directive handoff's).

A run asks (`approval/request`, from Claude Code's permission prompt tool served by `alp
mcp`): the caller must be a live run (PIN_OUTSIDE_EXECUTION otherwise: a person at a
terminal answers their own prompts). The request goes to the chat doors (`asker`, set by
`alpd.channels`), which send Approve / Deny buttons, each carrying a nonce stored in
`channel_prompts`; then the run waits, at most its timeout. The answer is whatever button
the paired sender pressed first (`answer`: a nonce is spent once, in one transaction); no
door to ask, or no answer by the timeout, is a deny — the run is headless, nobody else
will answer. Text typed in a chat never reaches `answer`: only a button's nonce does.

At most `MAX_WAITING` requests wait at once (a run asking in a loop gets denies, not memory).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Final, Literal

import anyio
import structlog

from alpd.domain.secrets.filter import redact
from alpd.services.context import Caller, Daemon
from alpd.services.runs.callers import execution_of_caller
from alpd.store import channels as store
from alpd.store.db import Tx
from protocol import messages as m

MAX_WAITING: Final = 64
DEFAULT_TIMEOUT: Final = 300.0
#: how much of a tool's input a prompt shows
SUMMARY_CHARS: Final = 600

log = structlog.get_logger("alpd.approvals")

Answer = Literal["approve", "deny", "expired"]
Subject = Literal["inbox", "permission"]


@dataclass(frozen=True, slots=True)
class PermissionAsk:
    request_id: str
    execution_id: str
    thread_id: str | None
    tool_name: str
    #: the tool's input, secret-filtered and capped, as the person reads it
    summary: str
    timeout: float


#: sends an ask to the chat doors; how many chats were asked
Asker = Callable[[PermissionAsk], Awaitable[int]]


@dataclass(slots=True)
class _Waiting:
    done: anyio.Event = field(default_factory=anyio.Event)
    decision: Literal["allow", "deny"] = "deny"
    by: str | None = None


def summarize(tool_name: str, tool_input: dict[str, object]) -> str:
    """One short, secret-filtered text of what the tool would do."""
    command = tool_input.get("command")
    text = command if isinstance(command, str) else json.dumps(tool_input, ensure_ascii=False)
    text = redact(text).text
    if len(text) > SUMMARY_CHARS:
        text = text[: SUMMARY_CHARS - 1] + "…"
    return f"{tool_name}: {text}"


class Approvals:
    def __init__(self, d: Daemon) -> None:
        self.d = d
        self.asker: Asker | None = None
        self._waiting: dict[str, _Waiting] = {}

    async def request(self, caller: Caller, params: m.ApprovalParams) -> m.ApprovalResult:
        run = await execution_of_caller(self.d.store, caller)
        timeout = params.timeout if params.timeout is not None else DEFAULT_TIMEOUT
        if len(self._waiting) >= MAX_WAITING:
            return m.ApprovalResult(
                decision="deny", reason=f"{MAX_WAITING} approval requests already wait"
            )
        ask = PermissionAsk(
            request_id=self.d.clock.new_id("apr_"),
            execution_id=run.id,
            thread_id=run.thread_id,
            tool_name=params.tool_name,
            summary=summarize(params.tool_name, params.input),
            timeout=timeout,
        )
        waiting = self._waiting[ask.request_id] = _Waiting()
        try:
            asked = await self.asker(ask) if self.asker is not None else 0
            if not asked:
                return m.ApprovalResult(
                    decision="deny",
                    reason="no chat is paired to ask the person (alp channel pair); "
                    "allow the tool in the agent's allowedTools to run it unattended",
                )
            with anyio.move_on_after(timeout):
                await waiting.done.wait()
            if not waiting.done.is_set():
                await self._expire(ask.request_id)
                log.info("approval_timed_out", request=ask.request_id, execution=run.id)
                return m.ApprovalResult(
                    decision="deny", reason=f"no answer in {timeout:g} s: denied"
                )
            verb = "approved" if waiting.decision == "allow" else "denied"
            log.info("approval_answered", request=ask.request_id, decision=waiting.decision)
            return m.ApprovalResult(
                decision=waiting.decision, reason=f"{verb} by {waiting.by}", by=waiting.by
            )
        finally:
            self._waiting.pop(ask.request_id, None)

    def decide(self, request_id: str, decision: Literal["allow", "deny"], by: str) -> bool:
        """Answer a waiting request; False when it no longer waits."""
        waiting = self._waiting.get(request_id)
        if waiting is None or waiting.done.is_set():
            return False
        waiting.decision, waiting.by = decision, by
        waiting.done.set()
        return True

    def waiting(self, request_id: str) -> bool:
        return request_id in self._waiting

    # the buttons' nonces

    async def new_prompt(self, channel: str, chat: str, subject: Subject, subject_id: str) -> str:
        """A one-time nonce for a prompt about `subject_id`, sent to `chat`."""
        nonce = secrets.token_urlsafe(12)
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> None:
            await store.insert_prompt(
                tx, nonce=nonce, channel=channel, chat=chat, subject=subject,
                subject_id=subject_id, at=at,
            )  # fmt: skip

        await self.d.store.write(unit)
        return nonce

    async def sent(self, nonce: str, message: str) -> None:
        async def unit(tx: Tx) -> None:
            await store.set_prompt_message(tx, nonce, message)

        await self.d.store.write(unit)

    async def answer(self, nonce: str, answer: Answer) -> store.PromptRow | None:
        """Spend `nonce` with `answer`; None when unknown or spent (pressed twice)."""
        at = self.d.clock.now_iso()

        async def unit(tx: Tx) -> store.PromptRow | None:
            return await store.answer_prompt(tx, nonce, answer, at)

        return await self.d.store.write(unit)

    async def prompts(self, subject: Subject, subject_id: str) -> list[store.PromptRow]:
        return await store.prompt_for(self.d.store, subject, subject_id)

    async def _expire(self, request_id: str) -> None:
        for prompt in await self.prompts("permission", request_id):
            await self.answer(prompt.nonce, "expired")


__all__ = ["Answer", "Approvals", "Asker", "PermissionAsk", "Subject", "summarize"]
