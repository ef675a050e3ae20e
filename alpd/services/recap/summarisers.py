"""The two summarisers of a thread's recap, each run as one `temp` execution.

Every refresh is an execution of kind `temp` with origin `{door: "daemon", by: "recap",
purpose: "recap"}`: it belongs to the thread (so `alp ps --all` and `alp activity` show it,
with its cost) without being one of its roots (so it never makes the thread busy, is never
projected and leaves no report). Its policy carries the thread binding of the snapshot it
summarised. `temp` work is hidden from default listings.

* `ClaudeSummariser` runs ``claude -p --model M --tools "" --no-session-persistence
  --strict-mcp-config --output-format json --system-prompt INSTRUCTIONS`` under alpd's
  supervisor, the input on its standard input (a file in the execution's directory), and
  reads the result, usage and cost from the JSON Claude Code prints. The program and the
  extra environment are those of `[runtimes.claude]`.
* `ApiSummariser` posts one request to the Anthropic Messages API (stdlib HTTP, in a worker
  thread), the key from the environment variable `apiKeyEnv`; the usage comes from the
  response and the cost from `[runtimes.claude] prices`, if set.

Either one returns a `SummaryReply`: the model's text, or why there is none.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Protocol

import anyio
import structlog

from alpd.domain.ids import EXECUTION_PREFIX
from alpd.domain.recap.config import API_TIMEOUT_CAP_SECONDS, RecapSettings
from alpd.domain.recap.summary import INSTRUCTIONS
from alpd.domain.runs.agents import AgentDefinition
from alpd.domain.runs.policy import Origin, Policy, PolicyRequest, ThreadBinding, build_policy
from alpd.errors import ExecutionSettled, RuntimeUnavailable, SpawnFailed
from alpd.runtimes.base import LaunchSpec, find_program
from alpd.services.conversation.wake import owner_caller
from alpd.services.history.summary import price_cost
from alpd.services.runs.executions import Executions
from alpd.services.runs.graph import cancel
from alpd.store import recap as recaps
from alpd.store.db import Tx
from alpd.store.runs import insert_execution
from alpd.supervisor.supervisor import STDOUT_FILE
from protocol import messages as m

log = structlog.get_logger("alpd.recap")

RECAP_ORIGIN: Final = Origin(door="daemon", by="recap", purpose="recap")
#: what is read of a summariser's output (Claude Code's JSON result is a few KiB)
OUTPUT_READ_BYTES: Final = 1 << 20
API_MAX_TOKENS: Final = 1024
CLAUDE_INSTALL_HINT: Final = 'install Claude Code, or set [recap] summariser = "api"'


@dataclass(frozen=True, slots=True)
class SummaryJob:
    thread_id: str
    owner_uid: int
    binding: ThreadBinding
    input: str
    settings: RecapSettings


@dataclass(frozen=True, slots=True)
class SummaryReply:
    execution_id: str | None
    text: str | None
    error: str | None = None


class Summariser(Protocol):
    async def summarise(self, job: SummaryJob) -> SummaryReply: ...


async def open_temp_run(
    ex: Executions, job: SummaryJob, *, runtime: str, model: str
) -> tuple[str, Path]:
    """Insert the refresh's `temp` execution (reserved); its id and directory."""
    execution_id = ex.d.clock.new_id(EXECUTION_PREFIX)
    exec_dir = ex.paths.make_exec_dir(execution_id)
    agent = AgentDefinition(name="recap", runtime=runtime, model=model)
    request = PolicyRequest(
        agent="recap",
        kind="temp",
        headless=True,
        workspace=str(exec_dir),
        origin=RECAP_ORIGIN,
    )
    policy: Policy = build_policy(agent, request, job.binding)
    at = ex.d.clock.now_iso()

    async def unit(tx: Tx) -> None:
        await insert_execution(
            tx,
            execution_id=execution_id,
            owner_uid=job.owner_uid,
            policy=policy,
            cwd=str(exec_dir),
            exec_dir=str(exec_dir),
            launcher_pid=os.getpid(),
            at=at,
            thread_id=job.thread_id,
            root_id=execution_id,
            is_root=False,
            host=ex.d.host,
        )

    await ex.d.store.write(unit)
    return execution_id, exec_dir


async def record_usage(
    ex: Executions, execution_id: str, usage: m.Usage | None, cost: float | None
) -> None:
    async def unit(tx: Tx) -> None:
        await recaps.set_usage(tx, execution_id, usage, cost)

    await ex.d.store.write(unit)


async def settle_temp(ex: Executions, execution_id: str, outcome: m.Outcome, note: str) -> None:
    params = m.SettleParams(execution_id=execution_id, outcome=outcome, summary=note)
    try:
        await ex.settle(None, params)
    except ExecutionSettled:
        return


def usage_of(data: dict[str, Any]) -> m.Usage:
    return m.Usage(
        input_tokens=int(data.get("input_tokens") or 0),
        output_tokens=int(data.get("output_tokens") or 0),
        cache_read_tokens=int(data.get("cache_read_input_tokens") or 0),
        cache_creation_tokens=int(data.get("cache_creation_input_tokens") or 0),
    )


class ClaudeSummariser:
    """``claude -p --model haiku`` with no tools, supervised like any headless run."""

    def __init__(self, ex: Executions) -> None:
        self.ex = ex

    async def summarise(self, job: SummaryJob) -> SummaryReply:
        ex, model = self.ex, job.settings.model_name()
        config = ex.agents.runtime("claude")
        try:
            program = find_program("claude", config.command, CLAUDE_INSTALL_HINT)
        except RuntimeUnavailable as exc:
            return SummaryReply(None, None, exc.message)
        execution_id, exec_dir = await open_temp_run(ex, job, runtime="claude", model=model)
        spec = LaunchSpec(
            argv=[
                program, "-p", "--model", model, "--tools", "", "--no-session-persistence",
                "--strict-mcp-config", "--output-format", "json",
                "--system-prompt", INSTRUCTIONS,
            ],
            env=dict(config.env),
            cwd=str(exec_dir),
            stdin=job.input,
        )  # fmt: skip
        try:
            await ex.spawn_running(execution_id, spec, exec_dir)
        except SpawnFailed as exc:
            await settle_temp(ex, execution_id, "failed", exc.message)
            return SummaryReply(execution_id, None, exc.message)
        waited = m.WaitParams(execution_id=execution_id, timeout=job.settings.timeout_seconds)
        done = await ex.wait(owner_caller(job.owner_uid), waited)
        if done.status != "settled":
            await cancel(ex, owner_caller(job.owner_uid), m.ExecutionRef(execution_id=execution_id))
            return SummaryReply(execution_id, None, "the summariser timed out")
        return await self._read_result(execution_id, exec_dir, model, done)

    async def _read_result(
        self, execution_id: str, exec_dir: Path, model: str, done: m.Execution
    ) -> SummaryReply:
        raw = _read_head(exec_dir / STDOUT_FILE)
        try:
            result = json.loads(raw)
        except ValueError:
            result = None
        if not isinstance(result, dict):
            return SummaryReply(execution_id, None, f"claude ended {done.outcome} without a result")
        usage = usage_of(result.get("usage") or {})
        cost = result.get("total_cost_usd")
        if not isinstance(cost, int | float):
            cost = price_cost(usage, model, self.ex.agents.runtime("claude").prices)
        await record_usage(self.ex, execution_id, usage, float(cost) if cost is not None else None)
        text = result.get("result")
        if result.get("is_error") or not isinstance(text, str):
            return SummaryReply(execution_id, None, f"claude reported an error: {str(text)[:200]}")
        return SummaryReply(execution_id, text)


class ApiSummariser:
    """One Messages API request; the key from the environment, never from the config."""

    def __init__(self, ex: Executions) -> None:
        self.ex = ex

    async def summarise(self, job: SummaryJob) -> SummaryReply:
        ex, settings = self.ex, job.settings
        key = ex.environ.get(settings.api_key_env)
        if not key:
            return SummaryReply(None, None, f"{settings.api_key_env} is not set")
        model = settings.model_name()
        execution_id, _ = await open_temp_run(ex, job, runtime="api", model=model)
        await _mark_running(ex, execution_id)
        body = {
            "model": model,
            "max_tokens": API_MAX_TOKENS,
            "system": INSTRUCTIONS,
            "messages": [{"role": "user", "content": job.input}],
        }
        url = settings.api_url.rstrip("/") + "/v1/messages"
        timeout = min(settings.timeout_seconds, API_TIMEOUT_CAP_SECONDS)
        try:
            answer = await anyio.to_thread.run_sync(_post_json, url, body, key, timeout)
        except (OSError, ValueError) as exc:
            note = f"the API request failed: {_reason(exc)}"
            await settle_temp(ex, execution_id, "failed", note)
            return SummaryReply(execution_id, None, note)
        usage = usage_of(answer.get("usage") or {})
        cost = price_cost(usage, model, ex.agents.runtime("claude").prices)
        await record_usage(ex, execution_id, usage, cost)
        await settle_temp(ex, execution_id, "completed", "recap refreshed")
        blocks = answer.get("content") or []
        text = "".join(block.get("text", "") for block in blocks if isinstance(block, dict))
        return SummaryReply(execution_id, text or None, None if text else "the reply was empty")


async def _mark_running(ex: Executions, execution_id: str) -> None:
    at = ex.d.clock.now_iso()

    async def unit(tx: Tx) -> None:
        await recaps.mark_running(tx, execution_id, at)

    await ex.d.store.write(unit)


def _post_json(url: str, body: dict[str, Any], key: str, timeout: float) -> dict[str, Any]:
    request = urllib.request.Request(
        url,
        data=json.dumps(body).encode(),
        headers={
            "content-type": "application/json",
            "x-api-key": key,
            "anthropic-version": "2023-06-01",
        },
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        data = json.loads(response.read(OUTPUT_READ_BYTES))
    if not isinstance(data, dict):
        raise ValueError("the API answered something other than a JSON object")
    return data


def _reason(exc: Exception) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    return str(exc)[:200]


def _read_head(path: Path) -> str:
    try:
        with path.open("rb") as f:
            return f.read(OUTPUT_READ_BYTES).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return ""


__all__ = [
    "ApiSummariser",
    "ClaudeSummariser",
    "Summariser",
    "SummaryJob",
    "SummaryReply",
]
