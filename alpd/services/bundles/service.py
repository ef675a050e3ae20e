"""`thread/export` and `thread/import` (docs/bundles.md).

Export: the thread's rows, read in one read transaction (`alpd.store.bundles.export_thread`),
go line by line (`BundleWriter`) through gzip into `$ALP_HOME/bundles/<id>.alp.gz` (0600,
written under a temporary name, synced, renamed); the client copies it to its stdout and
removes it. A bundle a client never removed is removed by the next export after an hour.

Import: the file is read by the daemon (the caller is its owner, checked at the socket), at
most `MAX_FILE_BYTES` of gzip and `MAX_BUNDLE_BYTES` once inflated (BUNDLE_INVALID, naming
the limit). Everything happens in one write unit on the writer's thread, streaming: each
line is hashed against the manifest (`BundleReader`), each record checked against its own
digests (`RecordChecker`) and inserted (`BundleImporter`); any failure rolls the whole unit
back, so a refused bundle leaves nothing. A failure is held until the manifest is read, so a
changed byte is called BUNDLE_TAMPERED (the manifest disagrees), not the shape it broke.

The thread already here: nothing is written; at the end the bundle's revision, context
revision and head digest are compared with the stored ones — equal is "nothing changed"
(`imported: false`), different is BUNDLE_CONFLICT (another state of the thread: moving a
thread back and forth is not a merge).
"""

from __future__ import annotations

import gzip
import os
import stat
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Final

import structlog

from alpd import __version__
from alpd.domain.bundles.format import TABLES, BundleReader, BundleWriter, Header
from alpd.errors import AlpError, BundleConflict, BundleInvalid, BundleTampered
from alpd.files import fsync_dir
from alpd.services.bundles.checks import RecordChecker
from alpd.services.context import Caller, Daemon
from alpd.services.runs.callers import refuse_runs
from alpd.services.threads.lifecycle import ThreadService, check_owner
from alpd.store.bundles import BundleImporter, Row, export_thread, stored_thread
from alpd.store.db import BlockingTx
from alpd.store.threads.shell import find_thread
from protocol import messages as m

__all__ = ["MAX_BUNDLE_BYTES", "MAX_FILE_BYTES", "BundleService", "bundle_lines"]

log = structlog.get_logger("alpd.bundles")

#: the bundle file as given (gzip) and inflated: past either, BUNDLE_INVALID with the limit
MAX_FILE_BYTES: Final = 2 * 1024**3
MAX_BUNDLE_BYTES: Final = 8 * 1024**3
#: a bundle an export left in $ALP_HOME/bundles this long is the client's that died
_STALE_SECONDS: Final = 3600
_SUFFIX: Final = ".alp.gz"


class BundleService:
    def __init__(self, daemon: Daemon, home: Path, threads: ThreadService) -> None:
        self.d = daemon
        self.directory = home / "bundles"
        self.threads = threads
        self.max_file_bytes = MAX_FILE_BYTES
        self.max_bundle_bytes = MAX_BUNDLE_BYTES

    async def export(self, caller: Caller, params: m.ThreadExportParams) -> m.ThreadExportResult:
        await refuse_runs(self.d.store, caller, "export a thread")
        thread = await find_thread(self.d.store, params.thread_id)
        check_owner(thread, caller)
        self.directory.mkdir(mode=0o700, exist_ok=True)
        self._sweep()
        path = self.directory / (self.d.clock.new_id("bundle_") + _SUFFIX)
        partial = path.with_name(path.name + ".part")
        writer = BundleWriter()
        fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as raw:
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=6, mtime=0) as out:
                    header = writer.header(
                        alp_version=__version__,
                        thread_id=thread.id,
                        exported_at=self.d.clock.now_iso(),
                    )
                    out.write(header)

                    def emit(table: str, row: Row) -> None:
                        out.write(writer.record(table, row))

                    def work(conn: BlockingTx) -> None:
                        export_thread(conn, thread.id, TABLES, emit)

                    await self.d.store.read(work)
                    out.write(writer.manifest())
                raw.flush()
                os.fsync(raw.fileno())
            partial.rename(path)
            fsync_dir(self.directory)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        size = path.stat().st_size
        log.info("thread_exported", thread=thread.id, bytes=size, counts=writer.counts)
        return m.ThreadExportResult(
            thread_id=thread.id, path=str(path), bytes=size, counts=writer.counts
        )

    def _sweep(self) -> None:
        cutoff = time.time() - _STALE_SECONDS
        for stale in self.directory.iterdir():
            try:
                if stale.name.endswith((_SUFFIX, ".part")) and stale.stat().st_mtime < cutoff:
                    stale.unlink()
            except OSError:
                continue

    async def import_(self, caller: Caller, params: m.ThreadImportParams) -> m.ThreadImportResult:
        await refuse_runs(self.d.store, caller, "import a thread")
        source = _open_bundle(params.path, self.max_file_bytes)
        limit = self.max_bundle_bytes
        try:
            result = await self.d.store.write_blocking(
                lambda conn: _import(conn, source, caller.uid, limit)
            )
        finally:
            source.close()
        header, counts, imported, left_out = result
        thread = await find_thread(self.d.store, header.thread_id)
        if imported:
            log.info("thread_imported", thread=thread.id, counts=counts, left_out=len(left_out))
            self.threads.publish(thread, "imported")
        return m.ThreadImportResult(
            thread=thread, imported=imported, counts=counts, left_out=left_out
        )


def _open_bundle(path: str, max_file_bytes: int) -> IO[bytes]:
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed by the caller
    except OSError as exc:
        raise BundleInvalid(f"cannot read {path}: {exc.strerror}", path=path) from exc
    info = os.fstat(handle.fileno())
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_file_bytes:
        handle.close()
        raise BundleInvalid(
            f"{path} is not a regular file of at most {max_file_bytes} bytes",
            path=path,
            limit=max_file_bytes,
        )
    return handle


def bundle_lines(source: IO[bytes], max_bytes: int, max_line_bytes: int) -> Iterator[bytes]:
    """The inflated lines of a gzip'd bundle, each with its newline (the last may lack it:
    the reader says so). BUNDLE_INVALID past `max_bytes` inflated or for a file that is not
    gzip or ends early; BUNDLE_TAMPERED when the gzip's own checksum fails or its deflate
    stream is damaged (bytes were changed)."""
    total = 0
    try:
        with gzip.GzipFile(fileobj=source, mode="rb") as inflated:
            while True:
                line = inflated.readline(max_line_bytes + 1)
                if not line:
                    return
                total += len(line)
                if total > max_bytes:
                    raise BundleInvalid(
                        f"the bundle inflates to more than {max_bytes} bytes", limit=max_bytes
                    )
                yield line
    except gzip.BadGzipFile as exc:
        if "CRC" in str(exc) or "length" in str(exc):
            raise BundleTampered(
                f"the bundle's gzip checksum fails ({exc}): its bytes were changed",
                what="gzip",
            ) from exc
        raise BundleInvalid(f"not a thread bundle (not gzip: {exc})") from exc
    except EOFError as exc:
        raise BundleInvalid("the bundle ends early (a truncated file?)") from exc
    except zlib.error as exc:
        raise BundleTampered(
            f"the bundle's compressed bytes are damaged ({exc})", what="gzip"
        ) from exc


ImportOutcome = tuple[Header, dict[str, int], bool, list[str]]


def _import(conn: BlockingTx, source: IO[bytes], owner_uid: int, limit: int) -> ImportOutcome:
    """The import unit, on the writer's thread (module docstring)."""
    reader = BundleReader()
    lines = bundle_lines(source, limit, reader.max_line_bytes)
    first = next(lines, None)
    if first is None:
        raise BundleInvalid("the file is empty")
    header = reader.header(first)
    existing = stored_thread(conn, header.thread_id)
    importer = None if existing is not None else BundleImporter(conn, header.thread_id, owner_uid)
    checker = RecordChecker(header)
    failure: AlpError | None = None
    for line in lines:
        record = reader.line(line)
        if record is None or failure is not None:
            continue
        try:
            checker.check(record)
            if importer is not None:
                importer.insert(record.table, record.row)
        except AlpError as exc:
            failure = exc
    counts = reader.finish()
    if failure is not None:
        raise failure
    checker.finish()
    if importer is None:
        assert existing is not None and checker.thread is not None
        bundled = (checker.thread["revision"], checker.thread["context_revision"])
        if (*bundled, checker.head_digest) != tuple(existing):
            raise BundleConflict(
                f"thread {header.thread_id} is here already at revision {existing.revision} "
                f"(context {existing.context_revision}); the bundle has revision {bundled[0]} "
                f"(context {bundled[1]}). A thread that went on in two places is not merged: "
                "nothing was imported",
                threadId=header.thread_id,
                revision=existing.revision,
                bundleRevision=bundled[0],
            )
        return header, counts, False, []
    importer.flush()
    return header, counts, True, importer.left_out
