"""Keeping the shadow repositories small: the `checkpoints` task of the daemon.

Every `interval` seconds, or soon after a checkpoint was taken (`CheckpointService.grew`),
each repository in turn, under its lock: the steps retention drops
(`alpd.domain.checkpoints.entries.expired`: older than `keep_days`, beyond the newest
`keep_roots`) lose their refs; then, while the repository is over `max_bytes`, the oldest half
of what is left goes too (the newest step always stays). Whenever refs went, or loose objects
piled up, `git gc --prune=now` packs what is still referenced and deletes the rest. Its
figures (bytes, workspaces, steps) are what `alp ps` shows. A failing pass is logged and
reported, never fatal.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio
import structlog

from alpd.domain.checkpoints.entries import expired, over_cap
from alpd.services.checkpoints.service import CheckpointService
from alpd.services.checkpoints.shadow import ShadowRepo, repo_bytes
from protocol import messages as m

__all__ = ["DEFAULT_INTERVAL", "Retention"]

#: seconds between passes when nothing pokes the task
DEFAULT_INTERVAL = 600.0
#: a pass waits this long after a poke, so a burst of roots makes one pass
SETTLE_DELAY = 5.0
#: loose objects past this make a pass pack them even when no ref went
LOOSE_OBJECTS = 2000

log = structlog.get_logger("alpd.checkpoints")


class Retention:
    def __init__(self, service: CheckpointService) -> None:
        self.service = service
        self.bytes = 0
        self.workspaces = 0
        self.entries = 0
        self.last_gc_at: str | None = None

    def state(self) -> m.CheckpointsState:
        settings = self.service.settings()
        return m.CheckpointsState(
            enabled=settings.enabled,
            bytes=self.bytes,
            workspaces=self.workspaces,
            entries=self.entries,
            max_bytes=settings.max_bytes,
            keep_roots=settings.keep_roots,
            last_gc_at=self.last_gc_at,
            path=str(self.service.root),
        )

    async def run(
        self, report: Callable[[m.TaskState], None], interval: float = DEFAULT_INTERVAL
    ) -> None:
        clock = self.service.d.clock
        while True:
            try:
                await self.pass_now()
                detail = f"{self.bytes // 1024**2} MiB in {self.workspaces} workspaces"
                report(
                    m.TaskState(
                        name="checkpoints", state="idle", last_run_at=clock.now_iso(), detail=detail
                    )
                )
            except Exception as exc:
                log.exception("checkpoint_gc_failed")
                report(
                    m.TaskState(
                        name="checkpoints",
                        state="failing",
                        last_run_at=clock.now_iso(),
                        last_error=f"{type(exc).__name__}: {exc}"[:300],
                    )
                )
            with anyio.move_on_after(interval):
                await self.service.grew.wait()
                await anyio.sleep(SETTLE_DELAY)
            self.service.grew = anyio.Event()

    async def pass_now(self) -> None:
        total = entries = 0
        repos = self.service.known_repos()
        for repo in repos:
            async with repo.lock:
                kept = await self._trim(repo)
            total += await anyio.to_thread.run_sync(repo_bytes, repo.path)
            entries += kept
        self.bytes, self.workspaces, self.entries = total, len(repos), entries
        self.last_gc_at = self.service.d.clock.now_iso()

    async def _trim(self, repo: ShadowRepo) -> int:
        """Retention on one repository (its lock held); the steps it keeps."""
        settings = self.service.settings()
        now = int(self.service.d.clock.now().timestamp())
        entries = await repo.entries()
        dropped = expired(
            entries, keep_roots=settings.keep_roots, keep_days=settings.keep_days, now=now
        )
        await repo.delete_refs([ref for e in dropped for ref in e.refs])
        left = [e for e in entries if e not in dropped]
        packed = False
        if dropped or await _loose_objects(repo) > LOOSE_OBJECTS:
            await repo.gc()
            packed = True
        while len(left) > 1:
            size = await anyio.to_thread.run_sync(repo_bytes, repo.path)
            if size <= settings.max_bytes:
                break
            going = over_cap(left)
            log.info("checkpoints_over_cap", repo=str(repo.path), bytes=size, dropping=len(going))
            await repo.delete_refs([ref for e in going for ref in e.refs])
            left = [e for e in left if e not in going]
            await repo.gc()
            packed = True
        if packed:
            log.info("checkpoints_gc", repo=str(repo.path), steps=len(left))
        return len(left)


async def _loose_objects(repo: ShadowRepo) -> int:
    out = await repo.git("count-objects", "-v")
    for line in out.decode().splitlines():
        key, _, value = line.partition(": ")
        if key == "count":
            return int(value)
    return 0
