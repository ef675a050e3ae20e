"""Binds every method of the wire contract to the service that does it."""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

import msgspec

from alpd import __version__
from alpd.doctor import doctor
from alpd.errors import KindNotAllowed
from alpd.rpc.dispatch import Handler, Session
from alpd.runtimes.registry import adapters
from alpd.services.conversation import activity
from alpd.services.conversation import push as pushing
from alpd.services.conversation import say as saying
from alpd.services.conversation.wake import refuse_claimed_kind
from alpd.services.history import importer, search
from alpd.services.recap.views import recap_state
from alpd.services.runs import graph, logs
from alpd.services.runs.callers import refuse_other_threads, refuse_runs
from alpd.services.runs.defaults import continue_defaults
from alpd.services.runs.rows import owned_execution
from alpd.services.threads import adopt as adoption
from alpd.services.threads import pins, steering, views
from alpd.store.status import daemon_counts
from protocol import messages as m

if TYPE_CHECKING:
    from alpd.assembly import Runtime


def door_of(session: Session, claimed: str) -> str:
    """The door a run started on `session` came in by: the daemon's to say, never the
    client's. A client may leave `door` out or say `cli`; any other (`scheduler`, `web`,
    `delegate` …) would forge an origin: KIND_NOT_ALLOWED."""
    if claimed not in ("cli", session.door):
        raise KindNotAllowed(
            f"door {claimed!r} is not this client's to claim: the daemon writes every origin "
            f"(this connection's runs come in by {session.door!r}); leave `door` out",
            field="door",
            door=claimed,
        )
    return session.door


def build_handlers(rt: Runtime) -> dict[str, Handler]:
    # long: one short handler per method of the wire contract and the table binding them;
    # each only unpacks params for its service, so the length grows with the contract.
    ex = rt.executions
    threads = ex.threads

    async def ping(session: Session, params: m.Empty) -> m.PingResult:
        return m.PingResult(version=__version__, protocol=m.PROTOCOL_VERSION, pid=os.getpid())

    async def reload(session: Session, params: m.Empty) -> m.ReloadResult:
        agents = await rt.reload_config()
        return m.ReloadResult(
            config=str(rt.config.config_path),
            agents=sorted(agents.agents),
            runtimes=sorted(adapters()),
        )

    async def sweep(session: Session, params: m.Empty) -> m.SweepResult:
        # Settles first: their hooks write reports and wake deliveries the sweep then sees.
        await rt.executions.settles_done()
        await rt.delivery.sweep_now()
        await rt.scheduler.tick_now()
        await rt.executions.settles_done()
        await rt.retention.pass_now()
        return m.SweepResult(tasks=rt.task_states())

    async def stop(session: Session, params: m.Empty) -> m.StopResult:
        rt.stop_requested.set()
        return m.StopResult(pid=os.getpid())

    async def status(session: Session, params: m.Empty) -> m.StatusResult:
        store = rt.daemon.store
        counts = await daemon_counts(store, session.caller.uid)
        return m.StatusResult(
            version=__version__,
            protocol=m.PROTOCOL_VERSION,
            pid=os.getpid(),
            uptime_seconds=round(time.monotonic() - rt.started, 3),
            home=str(rt.config.home),
            socket=str(rt.config.socket_path),
            database=str(store.path),
            connections=rt.connection_count,
            counts=counts,
            tasks=rt.task_states(),
            search=rt.meaning.state(),
        )

    async def daemon_doctor(session: Session, params: m.Empty) -> m.DoctorResult:
        return await doctor(rt)

    async def create(session: Session, params: m.ThreadCreateParams) -> m.Thread:
        return await threads.create(session.caller, params)

    async def list_(session: Session, params: m.ThreadListParams) -> m.ThreadListResult:
        return await threads.list(session.caller, params)

    async def close(session: Session, params: m.ThreadRef) -> m.Thread:
        return await threads.close(session.caller, params)

    async def archive(session: Session, params: m.ThreadRef) -> m.Thread:
        return await threads.archive(session.caller, params)

    store = rt.daemon.store

    async def own_thread(session: Session, thread_id: str | None, what: str) -> None:
        """A run aims `what` only at its own thread (NOT_FROM_A_RUN otherwise)."""
        await refuse_other_threads(store, session.caller, thread_id, what)

    async def execution_thread(session: Session, execution_id: str, what: str) -> None:
        record = await owned_execution(store, session.caller, execution_id)
        await own_thread(session, record.thread_id, f"{what} execution {execution_id} of")

    async def clear(session: Session, params: m.ThreadStepParams) -> m.ThreadStepResult:
        await own_thread(session, params.thread_id, "clear")
        return await steering.clear(ex, session.caller, params)

    async def undo(session: Session, params: m.ThreadStepParams) -> m.ThreadStepResult:
        await own_thread(session, params.thread_id, "undo")
        return await steering.undo(ex, session.caller, params)

    async def subscribe(session: Session, params: m.SubscribeParams) -> m.SubscribeResult:
        methods = frozenset(params.events) if params.events else None
        session.subscribe(methods, params.thread_id)
        return m.SubscribeResult(subscribed=sorted(methods or m.NOTIFICATIONS))

    async def start(session: Session, params: m.StartParams) -> m.ContinueResult:
        params = msgspec.structs.replace(params, door=door_of(session, params.door))
        request = m.ContinueParams(
            thread_id="",
            runtime=params.runtime,
            agent=params.agent,
            headless=params.headless,
            prompt=params.prompt,
            args=params.args,
            cwd=params.cwd,
            door=params.door,
            timeout_seconds=params.timeout_seconds,
            budget_usd=params.budget_usd,
            budget_tokens=params.budget_tokens,
        )
        # Agent, runtime and program first: a missing runtime must leave no empty thread.
        prepared = ex.prepare(session.caller, request)
        thread = await threads.create(
            session.caller, m.ThreadCreateParams(title=params.title, cwd=params.cwd)
        )
        request = msgspec.structs.replace(request, thread_id=thread.id)
        return await ex.continue_thread(session.caller, request, prepared=prepared)

    async def continue_(session: Session, params: m.ContinueParams) -> m.ContinueResult:
        refuse_claimed_kind(params)
        await own_thread(session, params.thread_id, "continue")
        params = msgspec.structs.replace(params, door=door_of(session, params.door))
        params = await continue_defaults(store, params)
        return await ex.continue_thread(session.caller, params)

    async def push(session: Session, params: m.PushParams) -> m.PushResult:
        await own_thread(session, params.thread_id, "push to")
        return await pushing.push(rt.delivery, session.caller, params)

    async def pending(session: Session, params: m.PendingParams) -> m.PendingResult:
        return await rt.delivery.pending(session.caller, params)

    async def handoff(session: Session, params: m.HandoffSendParams) -> m.HandoffSendResult:
        return await rt.handoffs.send(session.caller, params)

    async def inbox_list(session: Session, params: m.InboxListParams) -> m.InboxListResult:
        return await rt.inbox.list(session.caller, params)

    async def inbox_confirm(session: Session, params: m.InboxItemRef) -> m.InboxConfirmResult:
        return await rt.inbox.confirm(session.caller, params, session.door)

    async def inbox_dismiss(session: Session, params: m.InboxItemRef) -> m.Handoff:
        return await rt.inbox.dismiss(session.caller, params)

    async def memory_dismiss(session: Session, params: m.InboxItemRef) -> m.MemoryProposal:
        return await rt.inbox.dismiss_proposal(session.caller, params)

    async def ack(session: Session, params: m.AckParams) -> m.AckResult:
        return await rt.delivery.ack(session.caller, params)

    async def hold(session: Session, params: m.HoldParams) -> m.HoldResult:
        return await rt.delivery.hold(session.caller, params)

    async def show(session: Session, params: m.ThreadShowParams) -> m.ThreadShowResult:
        shown = await views.show(ex, session.caller, params)
        recap = await rt.recaps.show(session.caller, params.thread_id)
        return msgspec.structs.replace(shown, recap=recap)

    async def adopt(session: Session, params: m.ThreadAdoptParams) -> m.ThreadAdoptResult:
        # Only the person adopts: a run reaches no session outside its own thread.
        await refuse_runs(store, session.caller, "adopt an imported session")
        return await adoption.adopt(ex, session.caller, params, session.door)

    async def transcript(session: Session, params: m.TranscriptParams) -> m.TranscriptResult:
        return await rt.history.transcripts.page(session.caller, params)

    async def recap(session: Session, params: m.ThreadRecapParams) -> m.ThreadRecap:
        return await rt.recaps.show(session.caller, params.thread_id)

    async def context(session: Session, params: m.ContextParams) -> m.ContextResult:
        return await views.context(ex, session.caller, params)

    async def reconcile(session: Session, params: m.ThreadShowParams) -> m.ReconcileResult:
        await threads.get(session.caller, params.thread_id)
        settled = await ex.reconcile_thread(session.caller, params.thread_id)
        thread = await threads.get(session.caller, params.thread_id)
        return m.ReconcileResult(thread=thread, settled=settled)

    async def pin(session: Session, params: m.PinParams) -> m.PinResult:
        return await pins.pin(rt.daemon, session.caller, params)

    async def attach(session: Session, params: m.AttachParams) -> m.Execution:
        return await ex.attach(session.caller, params)

    async def settle(session: Session, params: m.SettleParams) -> m.Execution:
        await execution_thread(session, params.execution_id, "settle")
        return await ex.settle(session.caller, params)

    async def show_execution(session: Session, params: m.ExecutionRef) -> m.Execution:
        return await ex.show(session.caller, params)

    async def wait(session: Session, params: m.WaitParams) -> m.Execution:
        return await ex.wait(session.caller, params)

    async def execution_logs(session: Session, params: m.LogsParams) -> m.LogsResult:
        return await logs.logs(ex, session.caller, params)

    async def cancel(session: Session, params: m.ExecutionRef) -> m.Execution:
        await execution_thread(session, params.execution_id, "cancel")
        return await graph.cancel(ex, session.caller, params)

    async def delegate(session: Session, params: m.DelegateParams) -> m.DelegateResult:
        return await graph.delegate(ex, session.caller, params)

    async def tree(session: Session, params: m.TreeParams) -> m.TreeNode:
        return await graph.tree(ex, session.caller, params)

    async def sync(session: Session, params: m.ThreadSyncParams) -> m.ThreadSyncResult:
        return await rt.history.sync_thread(session.caller, params)

    async def import_(session: Session, params: m.HistoryImportParams) -> m.HistoryImportResult:
        return await importer.import_sessions(rt.history, session.caller, params)

    async def search_(session: Session, params: m.HistorySearchParams) -> m.HistorySearchResult:
        result = await search.search(rt.daemon.store, rt.meaning, session.caller, params)
        if params.thread_id is not None or params.role is not None:
            return result
        found = await rt.memory.search(session.caller, params.query, None)
        return msgspec.structs.replace(result, memories=found)

    mem = rt.memory

    async def memory_add(session: Session, params: m.MemoryAddParams) -> m.Memory:
        return await mem.add(session.caller, params, session.door)

    async def memory_list(session: Session, params: m.MemoryListParams) -> m.MemoryListResult:
        return await mem.list_memories(session.caller, params)

    async def memory_show(session: Session, params: m.MemoryRef) -> m.MemoryShowResult:
        return await mem.show(session.caller, params)

    async def memory_supersede(session: Session, params: m.MemorySupersedeParams) -> m.Memory:
        return await mem.supersede(session.caller, params, session.door)

    async def memory_retract(session: Session, params: m.MemoryRef) -> m.Memory:
        return await mem.retract(session.caller, params, session.door)

    async def memory_review(session: Session, params: m.MemoryReviewParams) -> m.MemoryReviewResult:
        return await mem.review(session.caller, params, session.door)

    async def memory_promote(session: Session, params: m.MemoryPromoteParams) -> m.Memory:
        return await mem.promote(session.caller, params, session.door)

    async def memory_propose(session: Session, params: m.MemoryProposeParams) -> m.MemoryProposal:
        return await rt.proposals.propose(session.caller, params)

    schedules = rt.schedules

    async def schedule_thread(session: Session, params: m.ScheduleRef, what: str) -> None:
        schedule = await schedules.show(session.caller, params)
        await own_thread(session, schedule.thread_id, f"{what} schedule {schedule.id} of")

    async def schedule_create(session: Session, params: m.ScheduleCreateParams) -> m.Schedule:
        await own_thread(session, params.thread_id, "schedule a run on")
        return await schedules.create(session.caller, params)

    async def schedule_list(session: Session, params: m.ScheduleListParams) -> m.ScheduleListResult:
        return await schedules.list(session.caller, params)

    async def schedule_show(session: Session, params: m.ScheduleRef) -> m.Schedule:
        return await schedules.show(session.caller, params)

    async def schedule_pause(session: Session, params: m.ScheduleRef) -> m.Schedule:
        await schedule_thread(session, params, "pause")
        return await schedules.pause(session.caller, params)

    async def schedule_resume(session: Session, params: m.ScheduleRef) -> m.Schedule:
        await schedule_thread(session, params, "resume")
        return await schedules.resume(session.caller, params)

    async def schedule_delete(session: Session, params: m.ScheduleRef) -> m.Schedule:
        await schedule_thread(session, params, "delete")
        return await schedules.delete(session.caller, params)

    async def schedule_run(session: Session, params: m.ScheduleRef) -> m.ScheduleRunResult:
        await schedule_thread(session, params, "run")
        return await rt.scheduler.run_by_hand(session.caller, params)

    async def ps(session: Session, params: m.PsParams) -> m.PsResult:
        uptime = time.monotonic() - rt.started
        result = await activity.ps(schedules, session.caller, params, rt.task_states(), uptime)
        return msgspec.structs.replace(
            result,
            recap=recap_state(rt.recaps.availability()),
            search=rt.meaning.state(),
            checkpoints=rt.retention.state(),
            budgets=await rt.budgets.listed(session.caller),
            windows=await rt.budgets.windows(session.caller),
        )

    async def thread_budget(session: Session, params: m.ThreadBudgetParams) -> m.ThreadBudgetResult:
        changes = params.clear or any(
            v is not None
            for v in (params.usd, params.soft_usd, params.tokens, params.soft_tokens,
                      params.window_percent, params.soft_window_percent)
        )  # fmt: skip
        if changes:
            await refuse_runs(store, session.caller, "change a thread's budget")
        return await rt.budgets.thread_budget(session.caller, params)

    async def diff(session: Session, params: m.ThreadDiffParams) -> m.ThreadDiffResult:
        return await rt.checkpoints.diff(session.caller, params)

    async def restore(session: Session, params: m.ThreadRestoreParams) -> m.ThreadRestoreResult:
        await refuse_runs(store, session.caller, "restore a thread's files (`alp thread restore`)")
        return await rt.checkpoints.restore(session.caller, params)

    async def activity_list(session: Session, params: m.ActivityParams) -> m.ActivityResult:
        return await activity.activity(schedules, session.caller, params)

    async def web_open(session: Session, params: m.WebOpenParams) -> m.WebOpenResult:
        await refuse_runs(store, session.caller, "open the web page (`alp web`)")
        return rt.web().open()

    async def say(session: Session, params: m.SayParams) -> m.SayResult:
        await refuse_runs(store, session.caller, "speak as the person (thread/say)")
        speaker = getattr(session, "speaker", None) or f"uid:{session.caller.uid}"
        return await saying.say(rt.delivery, session.caller, params, session.door, speaker)

    async def channel_list(session: Session, params: m.ChannelListParams) -> m.ChannelListResult:
        return m.ChannelListResult(
            channels=await rt.channels.states(),
            muted=await rt.channels.mutes.listed(session.caller),
        )

    async def channel_mute(session: Session, params: m.ChannelMuteParams) -> m.ThreadMute:
        await refuse_runs(store, session.caller, "mute a thread's notices (`alp channel mute`)")
        return await rt.channels.mutes.mute(session.caller, params)

    async def channel_unmute(session: Session, params: m.ChannelMuteParams) -> m.ThreadMute:
        await refuse_runs(store, session.caller, "unmute a thread (`alp channel unmute`)")
        return await rt.channels.mutes.unmute(session.caller, params)

    async def channel_pair(session: Session, params: m.ChannelPairParams) -> m.ChannelPairResult:
        await refuse_runs(store, session.caller, "pair a chat sender (`alp channel pair`)")
        return rt.channels.pair(params.channel)

    async def channel_unpair(
        session: Session, params: m.ChannelUnpairParams
    ) -> m.ChannelUnpairResult:
        await refuse_runs(store, session.caller, "unpair a chat sender (`alp channel unpair`)")
        removed = await rt.channels.pairing.unpair(params.channel, params.sender)
        return m.ChannelUnpairResult(channel=params.channel, sender=params.sender, removed=removed)

    async def approval(session: Session, params: m.ApprovalParams) -> m.ApprovalResult:
        limit = ex.agents.channels.approval_timeout
        timeout = limit if params.timeout is None else min(params.timeout, limit)
        return await rt.channels.approvals.request(
            session.caller, msgspec.structs.replace(params, timeout=timeout)
        )

    table: dict[str, Any] = {
        "memory/add": memory_add,
        "memory/list": memory_list,
        "memory/show": memory_show,
        "memory/supersede": memory_supersede,
        "memory/retract": memory_retract,
        "memory/review": memory_review,
        "memory/promote": memory_promote,
        "memory/propose": memory_propose,
        "memory/dismiss": memory_dismiss,
        "thread/say": say,
        "channel/list": channel_list,
        "channel/pair": channel_pair,
        "channel/unpair": channel_unpair,
        "channel/mute": channel_mute,
        "channel/unmute": channel_unmute,
        "approval/request": approval,
        "web/open": web_open,
        "schedule/create": schedule_create,
        "schedule/list": schedule_list,
        "schedule/show": schedule_show,
        "schedule/pause": schedule_pause,
        "schedule/resume": schedule_resume,
        "schedule/delete": schedule_delete,
        "schedule/run": schedule_run,
        "daemon/ps": ps,
        "activity/list": activity_list,
        "thread/sync": sync,
        "history/import": import_,
        "history/search": search_,
        "thread/start": start,
        "thread/continue": continue_,
        "thread/push": push,
        "delivery/pending": pending,
        "handoff/send": handoff,
        "inbox/list": inbox_list,
        "inbox/confirm": inbox_confirm,
        "inbox/dismiss": inbox_dismiss,
        "delivery/ack": ack,
        "delivery/hold": hold,
        "thread/show": show,
        "thread/context": context,
        "thread/recap": recap,
        "thread/transcript": transcript,
        "thread/adopt": adopt,
        "thread/export": lambda session, params: rt.bundles.export(session.caller, params),
        "thread/import": lambda session, params: rt.bundles.import_(session.caller, params),
        "thread/diff": diff,
        "thread/budget": thread_budget,
        "thread/restore": restore,
        "thread/reconcile": reconcile,
        "context/pin": pin,
        "execution/attach": attach,
        "execution/settle": settle,
        "execution/show": show_execution,
        "execution/wait": wait,
        "execution/logs": execution_logs,
        "execution/cancel": cancel,
        "execution/delegate": delegate,
        "delegation/tree": tree,
        "daemon/ping": ping,
        "daemon/status": status,
        "daemon/doctor": daemon_doctor,
        "daemon/reload": reload,
        "daemon/sweep": sweep,
        "daemon/stop": stop,
        "thread/create": create,
        "thread/list": list_,
        "thread/close": close,
        "thread/archive": archive,
        "thread/clear": clear,
        "thread/undo": undo,
        "events/subscribe": subscribe,
    }
    return table
