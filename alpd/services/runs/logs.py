"""`execution/logs`: what a headless run printed, read on from byte offsets.

A headless run's stdout and stderr are files in its execution directory (`stdout.log`,
`stderr.log`, see the supervisor). A read returns whole lines only while the run goes on, so
a secret is never cut in two across reads and slips the filter; once the run has settled the
last partial line comes too. Everything returned is secret-filtered.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from alpd.domain.secrets.filter import redact
from alpd.errors import InvalidArgument
from alpd.services.context import Caller
from alpd.services.runs.rows import owned_execution
from alpd.supervisor.supervisor import STDERR_FILE, STDOUT_FILE
from protocol import messages as m

if TYPE_CHECKING:
    from alpd.services.runs.executions import Executions


def read_chunk(
    path: Path, offset: int, limit: int, whole_lines: bool, field: str
) -> tuple[str, int]:
    """The text from `offset` (at most `limit` bytes) and the offset to read on from.

    A log only grows, so an offset past its end is no offset a read ever returned: refused by
    name (a seek there would fail in the kernel, and 2**63 does not even fit its argument)."""
    try:
        with path.open("rb") as f:
            size = os.fstat(f.fileno()).st_size
            if offset > size:
                raise _past_the_end(field, offset, size)
            f.seek(offset)
            data = f.read(limit)
    except FileNotFoundError:
        if offset > 0:
            raise _past_the_end(field, offset, 0) from None
        return "", offset
    if whole_lines and len(data) < limit:
        # A line still being written waits for the next read (a full chunk is cut anyway:
        # a line longer than `limit` must not stall the reader).
        data = data[: data.rfind(b"\n") + 1]
    return redact(data.decode("utf-8", errors="replace")).text, offset + len(data)


def _past_the_end(field: str, offset: int, size: int) -> InvalidArgument:
    return InvalidArgument(
        f"{field} {offset} is past the end of the log ({size} bytes so far): read on from "
        "the offset the previous read returned, or from 0",
        field=field,
        offset=offset,
        size=size,
    )


async def logs(ex: Executions, caller: Caller, params: m.LogsParams) -> m.LogsResult:
    record = await owned_execution(ex.d.store, caller, params.execution_id)
    settled = record.status == "settled"
    exec_dir = ex.paths.exec_dir(params.execution_id)

    def read() -> tuple[tuple[str, int], tuple[str, int]]:
        return (
            read_chunk(
                exec_dir / STDOUT_FILE,
                params.stdout_offset,
                params.limit,
                not settled,
                "stdoutOffset",
            ),
            read_chunk(
                exec_dir / STDERR_FILE,
                params.stderr_offset,
                params.limit,
                not settled,
                "stderrOffset",
            ),
        )

    (out, out_at), (err, err_at) = await anyio.to_thread.run_sync(read)
    return m.LogsResult(
        execution_id=params.execution_id,
        stdout=out,
        stderr=err,
        stdout_offset=out_at,
        stderr_offset=err_at,
        settled=settled,
        headless=record.headless,
        thread_id=record.thread_id,
    )
