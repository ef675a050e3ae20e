"""Checkpoints of a root's files, and putting them back.

- **before a root** (`before_root`, called by `Executions` after the root is reserved and
  before its program is spawned): a checkpoint of its workspace → `refs/alp/<thread>/<N>/pre`;
- **after it settles** (`after_settle`, the first after-settle hook, so before a delivery can
  wake the next root): → `…/<N>/post`.
A checkpoint that fails is logged and the root goes on: files are never a reason for a run
not to start or not to settle. A root whose workspace is `/` or the home directory is not
checkpointed (too much to copy; `docs/checkpoints.md`).

`thread/diff`: what a step changed, `git diff pre post` (against the files as they are now
while the root runs). `thread/restore`: the workspace put back to a step's `pre`, in order —
the thread must have no root running (THREAD_BUSY); the files as they are now are
checkpointed; unless `force`, they must be the step's `post` (WORKSPACE_CHANGED, naming what
changed); the plan (`alpd.domain.checkpoints.changes`) is answered as is for a dry run;
otherwise the current checkpoint becomes `refs/alp/<thread>/restore-<k>/pre`, created files are
deleted, the step's bytes written back, and the result becomes `…/restore-<k>/post` — so the
restore is a step of its own, which `alp thread undo --files` takes back next.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import anyio
import structlog

from alpd.domain.checkpoints.changes import (
    FileChange,
    parse_numstat,
    parse_raw,
    restore_plan,
)
from alpd.domain.checkpoints.entries import (
    Entry,
    Note,
    Phase,
    decode_note,
    ref_of,
    restore_step,
    root_step,
)
from alpd.domain.checkpoints.settings import CheckpointSettings
from alpd.errors import CheckpointNotFound, ThreadBusy, WorkspaceChanged
from alpd.services.checkpoints.files import checkpointable, delete_created
from alpd.services.checkpoints.shadow import WORKSPACE_FILE, GitFailed, ShadowRepo, Snapshot
from alpd.services.context import Caller, Daemon
from alpd.services.runs.rows import verified_policy
from alpd.services.threads.lifecycle import ThreadService
from alpd.store.checkpoints import root_by_sequence
from alpd.store.runs import ExecutionRecord, execution_by_id, unsettled_executions
from protocol import messages as m

log = structlog.get_logger("alpd.checkpoints")

#: a restore's answer lists this many changes, and counts the rest
LISTED_CHANGES = 1000


@dataclass(frozen=True, slots=True)
class Step:
    """One step's checkpoints, found."""

    repo: ShadowRepo
    thread_id: str
    step: str
    pre: str
    post: str | None
    execution: ExecutionRecord | None = None


class CheckpointService:
    def __init__(
        self, daemon: Daemon, home: Path, settings: Callable[[], CheckpointSettings]
    ) -> None:
        self.d = daemon
        self.root = home / "checkpoints"
        self.ignore_file = self.root / "ignore"
        self.settings = settings
        self.threads = ThreadService(daemon)
        self._repos: dict[str, ShadowRepo] = {}
        #: set after a post checkpoint: the gc task looks at the repositories again
        self.grew = anyio.Event()

    def repo(self, workspace: str) -> ShadowRepo:
        repo = self._repos.get(workspace)
        if repo is None:
            repo = self._repos[workspace] = ShadowRepo(self.root, workspace)
        return repo

    def known_repos(self) -> list[ShadowRepo]:
        """Every shadow repository on disk (those of earlier daemons included)."""
        if not self.root.is_dir():
            return []
        found = []
        for path in sorted(self.root.glob("*.git")):
            try:
                workspace = (path / WORKSPACE_FILE).read_text().strip()
            except OSError:
                continue
            found.append(self.repo(workspace))
        return found

    # taking checkpoints

    async def before_root(self, execution_id: str) -> None:
        await self._checkpoint(execution_id, "pre")

    async def after_settle(self, execution_id: str) -> None:
        if await self._checkpoint(execution_id, "post"):
            self.grew.set()

    async def _checkpoint(self, execution_id: str, phase: Phase) -> bool:
        settings = self.settings()
        if not settings.enabled:
            return False
        record = await execution_by_id(self.d.store, execution_id)
        if record is None or not record.is_root or record.thread_id is None:
            return False
        assert record.sequence is not None
        workspace = verified_policy(record).workspace
        if not checkpointable(workspace):
            log.info("checkpoint_skipped", execution=execution_id, workspace=workspace)
            return False
        step = root_step(record.sequence)
        try:
            snapshot = await self._snapshot(workspace, record.thread_id, step, phase, settings)
        except (GitFailed, OSError, TimeoutError) as exc:
            log.warning("checkpoint_failed", execution=execution_id, phase=phase, error=str(exc))
            return False
        log.info(
            "checkpoint",
            execution=execution_id,
            phase=phase,
            seconds=snapshot.seconds,
            skipped=len(snapshot.skipped) + snapshot.skipped_more,
        )
        return True

    async def _snapshot(
        self,
        workspace: str,
        thread_id: str,
        step: str,
        phase: Phase,
        settings: CheckpointSettings,
        *,
        with_ref: bool = True,
    ) -> Snapshot:
        repo = self.repo(workspace)
        note = Note(
            thread_id=thread_id,
            step=step,
            phase=phase,
            at=self.d.clock.now_iso(),
            workspace=workspace,
        )
        async with repo.lock:
            await repo.ensure(self.ignore_file)
            ref = ref_of(thread_id, step, phase) if with_ref else None
            return await repo.snapshot(note, settings.max_file_bytes, ref)

    # finding steps

    async def _step(self, caller: Caller, thread_id: str, root: int | None) -> Step:
        await self.threads.get(caller, thread_id)
        if root is not None:
            record = await root_by_sequence(self.d.store, thread_id, root)
            if record is None:
                raise CheckpointNotFound(
                    f"thread {thread_id} has no root #{root}", threadId=thread_id, root=root
                )
            repo = self.repo(verified_policy(record).workspace)
            return await self._found(repo, thread_id, root_step(root), record)
        latest = await self._latest(thread_id)
        if latest is None:
            raise CheckpointNotFound(
                f"thread {thread_id} has no file checkpoint (none taken yet, or dropped by "
                "retention: docs/checkpoints.md)",
                threadId=thread_id,
            )
        repo, entry = latest
        record = None
        if entry.step.isdigit():
            record = await root_by_sequence(self.d.store, thread_id, int(entry.step))
        return await self._found(repo, thread_id, entry.step, record)

    async def _found(
        self, repo: ShadowRepo, thread_id: str, step: str, record: ExecutionRecord | None
    ) -> Step:
        pre = None
        if (repo.path / "HEAD").exists():
            pre = await repo.resolve(ref_of(thread_id, step, "pre"))
        if pre is None:
            what = f"root #{step}" if step.isdigit() else step
            raise CheckpointNotFound(
                f"no file checkpoint of {what} of thread {thread_id} (checkpoints off when it "
                "started, a workspace alp does not checkpoint, or dropped by retention)",
                threadId=thread_id,
                step=step,
            )
        post = await repo.resolve(ref_of(thread_id, step, "post"))
        return Step(repo, thread_id, step, pre, post, record)

    async def _latest(self, thread_id: str) -> tuple[ShadowRepo, Entry] | None:
        best: tuple[ShadowRepo, Entry] | None = None
        for repo in self.known_repos():
            async with repo.lock:
                entries = await repo.entries(thread_id)
            for entry in entries:
                if best is None or (entry.at, entry.time) > (best[1].at, best[1].time):
                    best = (repo, entry)
        return best

    # thread/diff

    async def diff(self, caller: Caller, params: m.ThreadDiffParams) -> m.ThreadDiffResult:
        step = await self._step(caller, params.thread_id, params.root)
        repo = step.repo
        after, running = step.post, False
        if after is None:
            running = await self._running(step.thread_id)
            current = await self._snapshot(
                repo.workspace, step.thread_id, step.step, "post", self.settings(), with_ref=False
            )
            after = current.commit
        async with repo.lock:
            counts = parse_numstat(await repo.numstat(step.pre, after))
            changes = parse_raw(await repo.raw_diff(step.pre, after))
            patch, cut = (b"", False)
            if params.max_patch_bytes:
                patch, cut = await repo.patch(step.pre, after, params.max_patch_bytes)
            skipped: dict[str, m.SkippedFile] = {}
            more = 0
            for commit in (step.pre, after):
                note = decode_note(await repo.message_of(commit))
                if note is None:
                    continue
                more = max(more, note.skipped_more)
                for s in note.skipped:
                    skipped[s.path] = m.SkippedFile(path=s.path, reason=s.reason, bytes=s.bytes)
        files = [_diff_file(FileChange(c.path, c.status), counts.get(c.path)) for c in changes]
        return m.ThreadDiffResult(
            thread_id=step.thread_id,
            step=step.step,
            workspace=repo.workspace,
            files=files,
            patch=patch.decode("utf-8", "replace"),
            patch_truncated=cut,
            execution_id=step.execution.id if step.execution else None,
            root=int(step.step) if step.step.isdigit() else None,
            pre=step.pre,
            post=step.post,
            running=running,
            skipped=list(skipped.values()),
            skipped_more=more,
        )

    async def _running(self, thread_id: str) -> bool:
        return any(r.is_root for r in await unsettled_executions(self.d.store, thread_id))

    # thread/restore

    async def restore(self, caller: Caller, params: m.ThreadRestoreParams) -> m.ThreadRestoreResult:
        step = await self._step(caller, params.thread_id, params.root)
        if await self._running(step.thread_id):
            raise ThreadBusy(
                f"thread {step.thread_id} has a root running: its files are still changing; "
                "wait for it or cancel it, then restore",
                threadId=step.thread_id,
            )
        if step.post is None and not params.force:
            raise CheckpointNotFound(
                f"no checkpoint after {_what(step.step)} (alpd was down when it ended?): "
                "--force restores the files to before it without checking for later changes",
                threadId=step.thread_id,
                step=step.step,
            )
        repo = step.repo
        settings = self.settings()
        async with repo.lock:
            await repo.ensure(self.ignore_file)
            number = 1 + max(
                (
                    int(e.step.split("-")[1])
                    for e in await repo.entries(step.thread_id)
                    if e.step.startswith("restore-")
                ),
                default=0,
            )
            own = restore_step(number)
            note = Note(
                thread_id=step.thread_id,
                step=own,
                phase="pre",
                at=self.d.clock.now_iso(),
                workspace=repo.workspace,
            )
            current = await repo.snapshot(note, settings.max_file_bytes, None)
            if (
                step.post is not None
                and not params.force
                and current.tree != await repo.tree_of(step.post)
            ):
                changed = parse_raw(await repo.raw_diff(step.post, current.commit))
                raise WorkspaceChanged(
                    f"the files changed since {_what(step.step)} ended "
                    f"({len(changed)} changed): a restore would lose those changes; "
                    "look with `alp thread diff`, or restore with --force (the restore "
                    "is checkpointed, so it can be undone)",
                    threadId=step.thread_id,
                    step=step.step,
                    changed=[c.path for c in changed[:50]],
                )
            plan = restore_plan(parse_raw(await repo.raw_diff(current.commit, step.pre)))
            listed = [m.RestoreChange(path=s.path, action=s.action, why=s.why) for s in plan]
            result = m.ThreadRestoreResult(
                thread_id=step.thread_id,
                undone=step.step,
                workspace=repo.workspace,
                changes=listed[:LISTED_CHANGES],
                changes_more=max(0, len(listed) - LISTED_CHANGES),
                dry_run=params.dry_run,
            )
            if params.dry_run or not plan:
                return result
            await repo.git("update-ref", ref_of(step.thread_id, own, "pre"), current.commit)
            await anyio.to_thread.run_sync(delete_created, repo.workspace, plan)
            await repo.write_files(step.pre, [s.path for s in plan if s.action == "write"])
            after = Note(
                thread_id=step.thread_id,
                step=own,
                phase="post",
                at=self.d.clock.now_iso(),
                workspace=repo.workspace,
            )
            await repo.snapshot(after, settings.max_file_bytes, ref_of(step.thread_id, own, "post"))
        log.info(
            "files_restored", thread=step.thread_id, undone=step.step, step=own, changes=len(plan)
        )
        self.grew.set()
        return m.ThreadRestoreResult(
            thread_id=result.thread_id,
            undone=result.undone,
            workspace=result.workspace,
            changes=result.changes,
            changes_more=result.changes_more,
            step=own,
        )


def _what(step: str) -> str:
    return f"root #{step}" if step.isdigit() else step


def _diff_file(change: FileChange, counts: object) -> m.DiffFile:
    added = getattr(counts, "added", None)
    deleted = getattr(counts, "deleted", None)
    return m.DiffFile(path=change.path, status=change.status, added=added, deleted=deleted)


__all__ = ["CheckpointService", "Step"]
