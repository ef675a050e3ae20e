"""alpd's side of the transcript reader process (`alpd.services.history.read_worker`).

`TranscriptReader.read` sends a list of files to read to one long-lived worker process and
returns its results. The process is started on first use, stopped once idle for
`IDLE_SECONDS` (the history's background tick asks, `stop_if_idle`) and when alpd stops
(`close`); it exits by itself when alpd dies, since its stdin closes. Requests are served one
at a time. A worker that has exited between requests is replaced without a word; one that
dies while reading (killed, out of memory) fails that request with `HISTORY_READER_FAILED`,
and the next request starts a new one. Nothing was written for the files of a failed
request, so running the import again carries on where it stopped.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Final

import anyio
import msgspec
import structlog

import alpd
from alpd.errors import HistoryReaderFailed
from alpd.services.history.read_worker import ReadFile, ReadResult, frame, read_frame

__all__ = ["IDLE_SECONDS", "TranscriptReader"]

#: a reader process nobody asked anything for this long is stopped
IDLE_SECONDS: Final = 30.0
#: the answer pipe's buffer: an answer (~1 MiB of rows a 4 MiB batch) crosses in a few
#: wake-ups of each side instead of one per 64 KiB (Linux's default)
PIPE_BYTES: Final = 1 << 20

log = structlog.get_logger("alpd.history")

_RESULTS = msgspec.msgpack.Decoder(list[ReadResult])
_REQUEST = msgspec.msgpack.Encoder()


class TranscriptReader:
    """One transcript reader process, started when first needed."""

    def __init__(
        self,
        command: Sequence[str] = (sys.executable, "-m", "alpd.services.history.read_worker"),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._command = list(command)
        self._clock = clock
        self._process: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._last_used = 0.0

    @property
    def pid(self) -> int | None:
        """The running worker's pid (None when there is none)."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    async def read(self, files: list[ReadFile]) -> list[ReadResult]:
        """Each file's result, in order (blocking work in a thread; not cancellable)."""
        if not files:
            return []
        return await anyio.to_thread.run_sync(self._read, files)

    def _read(self, files: list[ReadFile]) -> list[ReadResult]:
        request = frame(_REQUEST.encode(files))
        with self._lock:
            process = self._running()
            assert process.stdin is not None and process.stdout is not None
            try:
                process.stdin.write(request)
                process.stdin.flush()
                body = read_frame(process.stdout)
                if body is None:
                    raise EOFError("no answer")
            except (OSError, EOFError) as exc:
                status = _stop(process)
                self._process = None
                raise HistoryReaderFailed(
                    f"the transcript reader process stopped ({_describe(status)}) while "
                    f"reading {len(files)} file(s) from {files[0].path}; run the import again: "
                    "it carries on where it stopped"
                ) from exc
            finally:
                self._last_used = self._clock()
        results = _RESULTS.decode(body)
        if len(results) != len(files):
            raise HistoryReaderFailed(f"the transcript reader answered {len(results)} results")
        return results

    def _running(self) -> subprocess.Popen[bytes]:
        process = self._process
        if process is not None and process.poll() is None:
            return process
        if process is not None:
            log.warning("transcript_reader_exited", status=_describe(process.returncode))
        # The child imports the alpd this process runs, wherever it was imported from.
        here = str(Path(alpd.__file__).resolve().parent.parent)
        path = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
        try:
            self._process = subprocess.Popen(
                self._command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": path},
            )
        except OSError as exc:
            self._process = None
            raise HistoryReaderFailed(
                f"the transcript reader process could not start: {exc}"
            ) from exc
        with contextlib.suppress(OSError):  # above the system's pipe-max-size: keep the default
            fcntl.fcntl(self._process.stdout, fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[arg-type]
        return self._process

    def idle(self) -> bool:
        """Whether a worker runs and has not been asked anything for `IDLE_SECONDS`."""
        return self._process is not None and self._clock() - self._last_used >= IDLE_SECONDS

    def stop_if_idle(self) -> None:
        """Stop the worker if it is `idle` and no request is in flight (blocking)."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self.idle() and self._process is not None:
                _stop(self._process)
                self._process = None
        finally:
            self._lock.release()

    def close(self) -> None:
        """Stop the worker (blocking: waits for the request in flight, if any)."""
        with self._lock:
            if self._process is not None:
                _stop(self._process)
                self._process = None


def _stop(process: subprocess.Popen[bytes]) -> int:
    """Close the worker's stdin (it exits), kill it if it does not; its exit status."""
    pipes: list[IO[bytes] | None] = [process.stdin, process.stdout]
    for pipe in pipes:
        try:
            if pipe is not None:
                pipe.close()
        except OSError:
            pass  # a broken pipe to a dead worker
    try:
        return process.wait(timeout=2)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def _describe(status: int | None) -> str:
    if status is None:
        return "still running"
    if status < 0:
        return f"killed by signal {-status}"
    return f"exit status {status}"
