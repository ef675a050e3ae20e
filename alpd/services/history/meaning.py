"""The meaning index: built in the background beside the full-text index, and asked by
`history/search` for its meaning leg (docs/search.md).

Building is a loop of small, bounded steps (`MeaningIndex.step`), each one transaction:

1. **cut**: the next `CUT_BATCH` history entries after the cutter's cursor become units and
   chunks (`alpd.domain.history.units`), an open run of assistant text extended in place;
2. **embed**: the next `EMBED_BATCH` chunks after the generation's `embedded_through` that
   have no vector yet are embedded (in a worker thread) and stored as float16 with the
   cursor moved: a kill -9 loses at most the batch in flight, and no chunk is embedded twice
   (a digest already embedded in this generation is skipped, wherever it occurs);
3. when both are caught up, the generation is **ready**, and older generations are dropped
   a batch at a time.

Politeness: one step at a time on one worker thread, and after each embedding batch the
loop sleeps as long as the batch took (`background/meaning_index.py`), so building takes at
most about half of one core; the event loop only ever waits for a thread hop.

A generation is fingerprinted by its model (`embedders`). When the configured model changes,
a new generation builds while the newest ready one keeps answering (state `stale`), its
queries embedded by its own model, loaded again from where the generation says it came from.

The meaning leg: the query's vector (cached per generation and text) against every chunk
vector of the answering generation (brute force and exact: int8 codes and their error bound,
then the float16 vectors as stored for the rows the bound cannot rule out, `ranking`; loaded
on the first search and extended as the index grows), the best `4 × limit` chunks filtered in SQL
with keyword search's filters, then more candidates while too few survive the filters. It
runs inside the search's one hop to the reader's thread (`meaning_leg`); only the hits a
page shows get their labels, digests and snippets.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Final

import anyio
import msgspec
import structlog

from alpd.domain.history.search_settings import SearchSettings
from alpd.domain.history.units import Chunk, UnitText, chunk_unit, cut_units
from alpd.services.context import Daemon
from alpd.services.history.meaning_leg import (
    ChunkFacts,
    LegPlan,
    LegResult,
    Matrix,
    empty_facts,
    empty_matrix,
)
from alpd.store.history import vectors as store
from protocol import messages as m

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from alpd.services.history.embedders import Embedder, EmbedderSource

__all__ = ["CUT_BATCH", "EMBED_BATCH", "MeaningIndex"]

CUT_BATCH: Final = 2000
EMBED_BATCH: Final = 64
DROP_BATCH: Final = 5000
#: an unavailable embedder (no model, endpoint down) is tried again after this long
RETRY_SECONDS: Final = 30.0
#: query vectors kept (per generation and query text): a person re-running or paging a search
QUERY_CACHE: Final = 256
#: the window the building rate is measured over
RATE_WINDOW_SECONDS: Final = 60.0

log = structlog.get_logger("alpd.search")


class MeaningIndex:
    def __init__(
        self,
        d: Daemon,
        settings: Callable[[], SearchSettings],
        environ: dict[str, str] | os._Environ[str] = os.environ,
    ) -> None:
        self.d = d
        #: () -> SearchSettings: the config's current `[search]` (it may be reloaded)
        self._settings = settings
        self._environ = environ
        self._loaded_for: SearchSettings | None = None
        self._embedder: Embedder | None = None
        self._answering: dict[str, Embedder] = {}
        self._unavailable: tuple[str, str] | None = None
        self._next_try = 0.0
        self._generation: store.Generation | None = None
        self._ready: store.Generation | None = None
        self._counts = store.IndexCounts(0, 0, 0, 0)
        self._error: str | None = None
        self._done: deque[tuple[float, int]] = deque(maxlen=4096)
        #: the answering generation's matrix and its facts, as the last search left them
        self._loaded: tuple[Matrix, ChunkFacts] | None = None
        #: (generation, query text) → the query's vector, the newest last
        self._queries: OrderedDict[tuple[int, str], npt.NDArray[np.float32]] = OrderedDict()
        self.wakeup = anyio.Event()

    # -- state -----------------------------------------------------------------------------

    def state(self) -> m.MeaningIndexState:
        settings = self._settings()
        if settings.embedder == "off":
            return m.MeaningIndexState(
                state="off",
                embedder="off",
                reason='[search] embedder = "off"',
            )
        if self._unavailable is not None and self._ready is None:
            reason, hint = self._unavailable
            return m.MeaningIndexState(
                state="off", embedder=settings.embedder, reason=f"{reason}; {hint}"
            )
        generation = self._generation
        if generation is None:
            return m.MeaningIndexState(
                state="building", embedder=settings.embedder, reason="loading the embedder"
            )
        if generation.ready_at is not None:
            state = "ready"
        elif self._ready is not None:
            state = "stale"
        else:
            state = "building"
        return m.MeaningIndexState(
            state=state,  # type: ignore[arg-type]
            embedder=generation.embedder,
            model=_source(generation).model,
            embedded=self._counts.embedded,
            total=self._counts.chunks,
            pending_entries=self._counts.entries_pending,
            rate=self._rate(),
            reason=None if self._unavailable is None else "; ".join(self._unavailable),
            error=self._error,
        )

    def _rate(self) -> float | None:
        now = time.monotonic()
        while self._done and self._done[0][0] < now - RATE_WINDOW_SECONDS:
            self._done.popleft()
        if len(self._done) < 2:
            return None
        span = self._done[-1][0] - self._done[0][0]
        count = sum(n for _, n in list(self._done)[1:])
        return round(count / span, 1) if span > 0 else None

    # -- building ----------------------------------------------------------------------------

    def retry(self) -> None:
        """Try an unavailable embedder again now, not in up to `RETRY_SECONDS` (a reload:
        `alp model fetch` has just put the model in place, or the endpoint was started)."""
        self._next_try = 0.0
        self.wakeup.set()

    async def step(self) -> tuple[bool, float]:
        """One bounded piece of building: (whether there is more to do now, seconds of
        embedding work it took)."""
        settings = self._settings()
        if settings != self._loaded_for:
            self._loaded_for, self._embedder, self._unavailable = settings, None, None
            self._next_try = 0.0
        if settings.embedder == "off":
            return False, 0.0
        if self._embedder is None:
            loaded = await self._load(settings)
            await self._refresh()  # the counts are the new generation's from now on
            if not loaded:
                return False, 0.0
        cut = await self._cut()
        took, embedded = await self._embed()
        await self._refresh()
        if not cut and not embedded:
            await self._finish()
        return cut or embedded, took

    async def _load(self, settings: SearchSettings) -> bool:
        from alpd.services.history import embedders

        if time.monotonic() < self._next_try:
            return False
        source = embedders.source_of(settings, self._environ)
        try:
            embedder = await anyio.to_thread.run_sync(
                embedders.load_embedder, source, settings, self._environ
            )
        except embedders.EmbedderUnavailable as exc:
            if self._unavailable != (exc.reason, exc.hint):
                log.warning("search_embedder_unavailable", reason=exc.reason, hint=exc.hint)
            self._unavailable = (exc.reason, exc.hint)
            self._next_try = time.monotonic() + RETRY_SECONDS
            return False
        now = self.d.clock.now_iso()
        model = msgspec.json.encode(embedder.source).decode()
        generation = await self.d.store.write_blocking(
            partial(
                store.ensure_generation,
                fingerprint=embedder.fingerprint,
                embedder=embedder.source.embedder,
                model=model,
                dims=embedder.dims,
                now=now,
            )
        )
        # the new generation's counts before it is shown: a status between the two would
        # name the new model with the old generation's counts
        self._counts = await self.d.store.read(
            partial(store.index_counts, generation=generation.id)
        )
        self._generation = generation
        self._embedder, self._unavailable = embedder, None
        self._answering[embedder.fingerprint] = embedder
        log.info(
            "search_generation",
            fingerprint=embedder.fingerprint,
            model=embedder.source.model,
            ready=generation.ready_at is not None,
        )
        return True

    async def _cut(self) -> bool:
        entries, runs = await self.d.store.read(partial(store.read_entries_to_cut, limit=CUT_BATCH))
        if not entries:
            return False
        units, _ = cut_units(entries, runs)
        chunked: list[tuple[UnitText, list[Chunk]]] = [(unit, chunk_unit(unit)) for unit in units]
        through = entries[-1].id
        await self.d.store.write_blocking(
            partial(store.write_units, units=chunked, through_entry=through)
        )
        return True

    async def _embed(self) -> tuple[float, bool]:
        embedder, generation = self._embedder, self._generation
        if embedder is None or generation is None:
            return 0.0, False
        todo, _, last = await self.d.store.read(
            partial(store.pending_chunks, generation=generation.id, limit=EMBED_BATCH)
        )
        if last == 0:
            return 0.0, False
        took = 0.0
        rows: list[tuple[bytes, bytes]] = []
        if todo:
            from alpd.services.history.embedders import EmbedderFailed

            started = time.monotonic()
            try:
                vectors = await anyio.to_thread.run_sync(
                    embedder.embed, [chunk.text for chunk in todo]
                )
            except EmbedderFailed as exc:
                self._error = str(exc)
                log.warning("search_embed_failed", error=str(exc))
                return RETRY_SECONDS / 10, False
            took = time.monotonic() - started
            half = vectors.astype("<f2")
            rows = [(chunk.digest, half[i].tobytes()) for i, chunk in enumerate(todo)]
        self._error = None
        await self.d.store.write_blocking(
            partial(store.write_vectors, generation=generation.id, vectors=rows, through=last)
        )
        self._done.append((time.monotonic(), len(todo)))
        return took, True

    async def _refresh(self) -> None:
        generations = await self.d.store.read(store.generations)
        current = self._generation
        if current is not None:
            current = next((g for g in generations if g.id == current.id), None)
            self._generation = current
        ready = [g for g in generations if g.ready_at is not None]
        self._ready = max(ready, key=lambda g: g.ready_at or "", default=None)
        if current is not None and current.ready_at is not None:
            self._ready = current
        if current is not None:  # with none, no count is shown (`state`)
            self._counts = await self.d.store.read(
                partial(store.index_counts, generation=current.id, known=self._counts)
            )

    async def _finish(self) -> None:
        """Caught up: the generation is ready; the others are dropped, a batch at a time."""
        current = self._generation
        if current is None:
            return
        if current.ready_at is None:
            await self.d.store.write_blocking(
                partial(store.mark_ready, generation=current.id, now=self.d.clock.now_iso())
            )
            log.info("search_generation_ready", fingerprint=current.fingerprint)
            await self._refresh()
        for old in await self.d.store.read(store.generations):
            if old.id != current.id:
                await self.d.store.write_blocking(
                    partial(store.drop_generation, generation=old.id, limit=DROP_BATCH)
                )
                self._answering.pop(old.fingerprint, None)

    # -- the meaning leg ---------------------------------------------------------------------

    def can_answer(self) -> bool:
        return self._ready is not None

    async def _answering_embedder(self, generation: store.Generation) -> Embedder | None:
        known = self._answering.get(generation.fingerprint)
        if known is not None:
            return known
        from alpd.services.history import embedders

        try:
            embedder = await anyio.to_thread.run_sync(
                embedders.load_embedder, _source(generation), self._settings(), self._environ
            )
        except embedders.EmbedderUnavailable:
            return None
        if embedder.fingerprint != generation.fingerprint:
            return None
        self._answering[generation.fingerprint] = embedder
        return embedder

    async def plan(self, text: str) -> LegPlan | None:
        """What the meaning leg of a search for `text` needs, on the loop side and without
        a hop in the usual case: the answering generation, its embedder, the matrix as loaded
        so far, and the query's vector when it is cached (or when the embedder is an
        endpoint: asked here, in a worker thread, never on the reader's). None when no
        generation can answer."""
        generation = self._ready
        if generation is None:
            return None
        embedder = await self._answering_embedder(generation)
        if embedder is None:
            return None
        key = (generation.id, text)
        vector = self._queries.get(key)
        if vector is not None:
            self._queries.move_to_end(key)
        elif not embedder.local:
            from alpd.services.history.embedders import EmbedderFailed

            try:
                vector = (await anyio.to_thread.run_sync(embedder.embed, [text]))[0]
            except EmbedderFailed:
                return None
        loaded = self._loaded
        if loaded is None or loaded[0].generation != generation.id:
            loaded = (empty_matrix(generation), empty_facts())
        return LegPlan(generation, embedder, *loaded, vector, text)

    def adopt(self, leg: LegResult) -> None:
        """Keep what a search's hop learnt: the matrix as it extended it and its facts as
        it refreshed them (the newer of what is kept and what the search has), the query's
        vector (a small LRU per generation and query text)."""
        current = self._loaded
        if (
            current is None
            or current[0].generation != leg.matrix.generation
            or (current[0].loaded_through, current[1].cursor)
            < (leg.matrix.loaded_through, leg.facts.cursor)
        ):
            self._loaded = (leg.matrix, leg.facts)
        key = (leg.matrix.generation, leg.text)
        self._queries[key] = leg.vector
        self._queries.move_to_end(key)
        while len(self._queries) > QUERY_CACHE:
            self._queries.popitem(last=False)


def _source(generation: store.Generation) -> EmbedderSource:
    from alpd.services.history.embedders import EmbedderSource

    return msgspec.json.decode(generation.model, type=EmbedderSource)
