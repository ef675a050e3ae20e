"""The recap service on a real SQLite store, with a fake clock and a fake summariser: gating,
single flight (20 concurrent triggers → one model call), back-off, and what the summariser
is sent (only entries a recap may read, secret-filtered, bounded).

The summariser is fake but the refresh is real: it opens and settles the `temp` execution
like the real ones (`alpd.services.recap.summarisers.open_temp_run`), and the recap it returns is
validated and stored by the service.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiosqlite
import anyio
import pytest

from alpd.clock import Clock
from alpd.domain.canonical import sha256_digest
from alpd.domain.recap.config import RecapSettings
from alpd.domain.runs.agents import default_config
from alpd.events import EventBus
from alpd.services.context import Caller, Daemon
from alpd.services.history.sync import HistoryService
from alpd.services.recap import refresh as recap_service
from alpd.services.recap.refresh import RecapService
from alpd.services.recap.summarisers import SummaryJob, SummaryReply, open_temp_run, settle_temp
from alpd.services.runs.dirs import Paths
from alpd.services.runs.executions import Executions
from alpd.services.runs.leases import Leases
from alpd.services.threads import steering
from alpd.store.db import Store
from alpd.store.history.entries import INSERT_ENTRY, entry_row
from protocol import messages as m

AWS_KEY = "AKIAIOSFODNN7EXAMPLE"
GOOD = json.dumps({"headline": "Bench rerun", "gist": "Four models left.", "openTasks": ["x"]})

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class FakeClock(Clock):
    def __init__(self) -> None:
        self.at = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self.at


@dataclass
class FakeSummariser:
    ex: Executions
    reply: str = GOOD
    inputs: list[str] = field(default_factory=list)
    release: anyio.Event = field(default_factory=anyio.Event)

    async def summarise(self, job: SummaryJob) -> SummaryReply:
        self.inputs.append(job.input)
        execution_id, _ = await open_temp_run(self.ex, job, runtime="fake", model="haiku")
        await self.release.wait()
        await settle_temp(self.ex, execution_id, "completed", "fake")
        return SummaryReply(execution_id, self.reply)


@dataclass
class World:
    ex: Executions
    recaps: RecapService
    fake: FakeSummariser
    clock: FakeClock
    caller: Caller
    thread_id: str
    tmp: Path
    sleeps: list[float]
    sleepers: list[anyio.Event]
    sleep: Callable[[float], Awaitable[None]]

    async def root(self, *texts: str) -> str:
        """A settled root whose transcript gave these entries (prompt, reply, …)."""
        started = await self.ex.continue_thread(
            self.caller,
            m.ContinueParams(
                thread_id=self.thread_id, runtime="command", args=["true"], cwd=str(self.tmp)
            ),
        )
        execution_id = started.execution.id
        await add_entries(self.recaps.history, execution_id, texts)
        await self.ex.settle(
            self.caller, m.SettleParams(execution_id=execution_id, outcome="completed")
        )
        return execution_id


async def add_entries(history: HistoryService, execution_id: str, texts: tuple[str, ...]) -> None:
    async def unit(conn: aiosqlite.Connection) -> None:
        for index, text in enumerate(texts):
            row = entry_row(
                {
                    "execution_id": execution_id,
                    "native_id": f"{execution_id}-{index}",
                    "role": "user" if index % 2 == 0 else "assistant",
                    "kind": "prompt" if index % 2 == 0 else "reply",
                    "text": text,
                    "tool_name": None,
                    "tool_input": None,
                    "output_tail": None,
                    "output_sha256": None,
                    "ts": None,
                    "model": None,
                    "usage": None,
                    "call_id": None,
                    "is_error": 0,
                    "byte_offset": index,
                }
            )
            await conn.execute(INSERT_ENTRY, row.params)

    await history.write(unit)


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    store = await Store.open(tmp_path / "alp.db")
    clock = FakeClock()
    daemon = Daemon(store=store, events=EventBus(), clock=clock, uid=os.getuid())
    settings = RecapSettings(summariser="api", min_roots=2, min_entries=50)
    agents = default_config()
    agents = type(agents)(agents=agents.agents, runtimes=agents.runtimes, recap=settings)
    ex = Executions(daemon, Paths(tmp_path, tmp_path / "alpd.sock"), agents, Leases())
    ex.environ = {"ANTHROPIC_API_KEY": "test", "PATH": os.environ.get("PATH", "")}
    sleeps: list[float] = []
    sleepers: list[anyio.Event] = []

    async def fake_sleep(seconds: float) -> None:
        sleeps.append(seconds)
        woken = anyio.Event()
        sleepers.append(woken)
        await woken.wait()

    fake = FakeSummariser(ex)
    recaps = RecapService(ex, HistoryService(ex), summariser=fake, sleep=fake_sleep)
    ex.after_step.append(recaps.after_step)
    caller = Caller(uid=os.getuid(), gid=os.getgid(), pid=os.getpid())
    thread = await ex.threads.create(caller, m.ThreadCreateParams(title="bench", cwd=str(tmp_path)))
    try:
        async with anyio.create_task_group() as tg:
            recaps.tg = tg
            yield World(
                ex, recaps, fake, clock, caller, thread.id, tmp_path, sleeps, sleepers, fake_sleep
            )
            tg.cancel_scope.cancel()
    finally:
        await store.close()


async def until(check: Callable[[], bool | Awaitable[bool]], what: str) -> None:
    with anyio.fail_after(20, shield=False):
        while True:
            result = check()
            if not isinstance(result, bool):
                result = await result
            if result:
                return
            await anyio.sleep(0.01)


async def recap_of(w: World) -> m.ThreadRecap:
    return await w.recaps.show(w.caller, w.thread_id)


async def test_twenty_concurrent_triggers_cause_one_model_call_and_at_most_one_follow_up(
    world: World,
) -> None:
    w = world
    await w.root("benchmark the models", "three of seven done")
    await w.root("rerun the failed ones", "four models left")
    actions: list[str] = []

    async def trigger() -> None:
        await anyio.sleep(0)
        actions.append(w.recaps.trigger(w.thread_id))

    async with anyio.create_task_group() as triggers:
        for _ in range(20):
            triggers.start_soon(trigger)
    await until(lambda: len(w.fake.inputs) == 1, "the refresh to reach the summariser")
    assert actions.count("start") == 1
    assert actions.count("follow-up") == 1
    assert actions.count("ignored") == 18
    w.fake.release.set()
    await until(lambda: w.thread_id not in w.recaps.flights, "the flight (and follow-up) to end")
    # the follow-up went through the gate again: nothing new since, so no second call
    assert len(w.fake.inputs) == 1
    recap = await recap_of(w)
    assert (recap.headline, recap.open_tasks) == ("Bench rerun", ["x"])
    assert recap.source_revision == 2 and recap.execution_id is not None
    temp = await w.ex.show(w.caller, m.ExecutionRef(execution_id=recap.execution_id))
    assert (temp.kind, temp.origin.purpose, temp.status) == ("temp", "recap", "settled")
    assert temp.thread_id == w.thread_id and temp.sequence is None


async def test_the_gate_waits_for_activity_and_the_interval(world: World) -> None:
    w = world
    w.fake.release.set()
    await w.root("only one root", "so far")
    w.recaps.trigger(w.thread_id)
    await until(lambda: w.thread_id not in w.recaps.flights, "the gated flight")
    assert w.fake.inputs == []  # one root, two entries: below both thresholds
    await w.root("a second root", "now enough")
    w.recaps.trigger(w.thread_id)
    await until(lambda: len(w.fake.inputs) == 1, "the first refresh")
    await until(lambda: w.thread_id not in w.recaps.flights, "the first flight")
    # two more roots, one minute later: enough activity, but within the 120 s interval
    w.clock.at += timedelta(seconds=60)
    await w.root("third", "root")
    await w.root("fourth", "root")
    w.recaps.trigger(w.thread_id)
    await until(lambda: len(w.sleepers) == 1, "the timer for later")
    assert w.sleeps == [pytest.approx(60.0)]
    assert len(w.fake.inputs) == 1
    w.clock.at += timedelta(seconds=60)
    w.sleepers[0].set()
    await until(lambda: len(w.fake.inputs) == 2, "the refresh the timer triggered")
    # a long thread is summarised from the previous recap plus what is new
    assert "## Previous recap" in w.fake.inputs[1] and "Bench rerun" in w.fake.inputs[1]
    assert "only one root" not in w.fake.inputs[1] and "fourth" in w.fake.inputs[1]


async def test_an_invalid_reply_is_discarded_and_backs_off(world: World) -> None:
    w = world
    w.fake.release.set()
    w.fake.reply = json.dumps({"headline": "x" * 81, "gist": "g", "openTasks": []})
    await w.root("one", "two")
    await w.root("three", "four")
    w.recaps.trigger(w.thread_id)
    await until(lambda: len(w.fake.inputs) == 1, "the refresh")
    await until(lambda: w.thread_id not in w.recaps.flights, "the flight")
    assert (await recap_of(w)).headline is None  # discarded, not truncated
    assert await failures(w) == (1, "2026-11-30T12:00:00.000Z")
    await w.root("five", "six")
    w.recaps.trigger(w.thread_id)
    await until(lambda: len(w.sleepers) == 1, "the back-off timer")
    assert w.sleeps == [pytest.approx(60.0)] and len(w.fake.inputs) == 1


async def failures(w: World) -> tuple[int, str] | None:
    row = await w.ex.d.store.fetchone(
        "SELECT failures, failed_at FROM recap_failures WHERE thread_id = ?", (w.thread_id,)
    )
    return None if row is None else (row["failures"], row["failed_at"])


async def test_the_back_off_survives_a_restart_and_a_success_clears_it(world: World) -> None:
    w = world
    w.fake.release.set()
    w.fake.reply = "no JSON here"
    await w.root("one", "two")
    await w.root("three", "four")
    w.recaps.trigger(w.thread_id)
    await refreshed(w, 1)
    w.clock.at += timedelta(seconds=90)
    await w.root("five", "six")
    w.recaps.trigger(w.thread_id)
    await refreshed(w, 2)  # the first back-off (60 s) is over: the second failure
    assert await failures(w) == (2, "2026-11-30T12:01:30.000Z")
    # alpd restarts: a new service on the same database, with nothing in memory
    w.clock.at += timedelta(seconds=60)
    restarted = RecapService(w.ex, w.recaps.history, summariser=w.fake, sleep=w.sleep)
    restarted.tg = w.recaps.tg
    await w.root("seven", "eight")
    restarted.trigger(w.thread_id)
    await until(lambda: len(w.sleepers) == 1, "the back-off timer after the restart")
    assert w.sleeps == [pytest.approx(60.0)] and len(w.fake.inputs) == 2  # 120 s after 2
    w.fake.reply = GOOD
    w.clock.at += timedelta(seconds=60)
    w.sleepers[0].set()
    await until(lambda: len(w.fake.inputs) == 3, "the refresh after the back-off")
    await until(lambda: w.thread_id not in restarted.flights, "its flight")
    assert (await restarted.show(w.caller, w.thread_id)).headline == "Bench rerun"
    assert await failures(w) is None


async def test_the_summariser_gets_filtered_text_only(world: World) -> None:
    w = world
    w.fake.release.set()
    await w.root(f"deploy with aws_access_key_id={AWS_KEY}", "done")
    await w.root("next", "ok")
    w.recaps.trigger(w.thread_id)
    await until(lambda: len(w.fake.inputs) == 1, "the refresh")
    assert AWS_KEY not in w.fake.inputs[0] and "[REDACTED:" in w.fake.inputs[0]


async def test_without_a_summariser_nothing_runs_and_the_recap_says_why(world: World) -> None:
    w = world
    w.ex.environ = {"PATH": os.environ.get("PATH", "")}  # no API key
    await w.root("one", "two")
    await w.root("three", "four")
    w.recaps.trigger(w.thread_id)
    await until(lambda: w.thread_id not in w.recaps.flights, "the flight")
    assert w.fake.inputs == []
    state = (await recap_of(w)).state
    assert not state.available and state.reason is not None and "ANTHROPIC_API_KEY" in state.reason


async def test_a_new_root_carries_the_recap_and_records_what_it_was_given(
    world: World,
) -> None:
    w = world
    w.fake.release.set()
    await w.root("one", "two")
    await w.root("benchmark again", "four models left")
    w.recaps.trigger(w.thread_id)
    await until(lambda: len(w.fake.inputs) == 1, "the refresh")
    await until(lambda: w.thread_id not in w.recaps.flights, "the flight")
    started = await w.ex.continue_thread(
        w.caller,
        m.ContinueParams(thread_id=w.thread_id, runtime="command", args=["true"], cwd=str(w.tmp)),
    )
    text = Path(started.session_context_path).read_text()
    pinned, _, derived = text.partition("# recap: derived from history, not authority")
    assert "# work state, not authority" in pinned and "Bench rerun" not in pinned
    assert "Headline: Bench rerun" in derived and "Four models left." in derived
    assert "# the last exchange: verbatim tail, not authority" in derived
    assert "four models left" in derived.split("# the last exchange")[1]
    row = await w.ex.d.store.fetchone(
        "SELECT * FROM root_derived WHERE execution_id = ?", (started.execution.id,)
    )
    given = text[text.index("\n# recap: derived") :]
    assert row is not None and row["recap_revision"] == 2
    assert (row["digest"], row["chars"]) == (sha256_digest(given.encode()), len(given))
    assert row["tail_from"] is not None


async def refreshed(w: World, calls: int) -> m.ThreadRecap:
    await until(lambda: len(w.fake.inputs) == calls, f"refresh {calls}")
    await until(lambda: w.thread_id not in w.recaps.flights, "the flight")
    return await recap_of(w)


async def test_an_undo_asks_for_a_refresh_that_starts_over_without_the_undone_root(
    world: World,
) -> None:
    w = world
    w.fake.release.set()
    await w.root("ONE asked", "ONE answered")
    await w.root("TWO asked", "TWO answered")
    await w.root("THREE asked", "THREE answered")
    w.recaps.trigger(w.thread_id)
    assert (await refreshed(w, 1)).headline == "Bench rerun"
    w.clock.at += timedelta(seconds=600)
    w.fake.reply = GOOD.replace("Bench rerun", "Two roots kept")
    params = m.ThreadStepParams(thread_id=w.thread_id)
    await steering.undo(w.ex, w.caller, params)  # root 3, which the recap read: it lapses
    again = await refreshed(w, 2)  # the undo asked; nothing else did
    sent = w.fake.inputs[1]
    assert "ONE asked" in sent and "TWO answered" in sent
    assert "THREE" not in sent and "## Previous recap" not in sent
    assert again.headline == "Two roots kept" and again.source_revision == 4


async def test_a_refresh_an_undo_asks_for_still_waits_for_the_interval(world: World) -> None:
    w = world
    w.fake.release.set()
    for word in ("ONE", "TWO", "THREE"):
        await w.root(f"{word} asked", f"{word} answered")
    w.recaps.trigger(w.thread_id)
    await refreshed(w, 1)
    w.clock.at += timedelta(seconds=30)
    await steering.undo(w.ex, w.caller, m.ThreadStepParams(thread_id=w.thread_id))
    await until(lambda: len(w.sleepers) == 1, "the timer for the rest of the interval")
    assert w.sleeps == [pytest.approx(90.0)] and len(w.fake.inputs) == 1
    assert (await recap_of(w)).headline is None  # lapsed, not yet replaced
    w.clock.at += timedelta(seconds=90)
    w.sleepers[0].set()
    assert (await refreshed(w, 2)).headline == "Bench rerun"
    assert "THREE" not in w.fake.inputs[1]


async def test_after_a_clear_only_new_work_counts_and_is_summarised(world: World) -> None:
    w = world
    w.fake.release.set()
    await w.root("ONE asked", "ONE answered")
    await w.root("TWO asked", "TWO answered")
    w.recaps.trigger(w.thread_id)
    await refreshed(w, 1)
    w.clock.at += timedelta(seconds=600)
    await steering.clear(w.ex, w.caller, m.ThreadStepParams(thread_id=w.thread_id))
    await until(lambda: w.thread_id not in w.recaps.flights, "the refresh the clear asked for")
    assert len(w.fake.inputs) == 1  # nothing a recap may read: no call
    assert (await recap_of(w)).headline is None
    await w.root("THREE asked", "THREE answered")
    w.recaps.trigger(w.thread_id)
    await until(lambda: w.thread_id not in w.recaps.flights, "the gated flight")
    assert len(w.fake.inputs) == 1  # one root since the clear: the cleared two do not count
    await w.root("FOUR asked", "FOUR answered")
    w.recaps.trigger(w.thread_id)
    assert (await refreshed(w, 2)).headline == "Bench rerun"
    sent = w.fake.inputs[1]
    assert "THREE asked" in sent and "FOUR answered" in sent
    assert "ONE" not in sent and "TWO" not in sent and "## Previous recap" not in sent
    started = await w.ex.continue_thread(
        w.caller,
        m.ContinueParams(thread_id=w.thread_id, runtime="command", args=["true"], cwd=str(w.tmp)),
    )
    given = Path(started.session_context_path).read_text()
    assert "Headline: Bench rerun" in given and "FOUR answered" in given
    assert "ONE" not in given and "TWO" not in given


async def test_a_root_that_settles_while_a_refresh_gathers_is_covered_by_its_undo(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    w = world
    w.fake.release.set()
    await w.root("ONE asked", "ONE answered")
    await w.root("TWO asked", "TWO answered")
    read = recap_service.readable_entries

    async def late_root(*args: Any) -> Any:
        # the third root settles between the refresh's count of roots and its read
        monkeypatch.setattr(recap_service, "readable_entries", read)
        await w.root("LATE asked", "LATE answered")
        return await read(*args)

    monkeypatch.setattr(recap_service, "readable_entries", late_root)
    w.recaps.trigger(w.thread_id)
    await refreshed(w, 1)
    assert "LATE answered" in w.fake.inputs[0]
    assert (await recap_of(w)).headline == "Bench rerun"
    await steering.undo(w.ex, w.caller, m.ThreadStepParams(thread_id=w.thread_id))
    # the recap read the undone root: it lapses
    assert (await recap_of(w)).headline is None
