"""Which execution a caller is inside, found from the kernel's view of its process ancestry.

Never from `ALP_EXECUTION_ID`: that variable is a label anyone can set. The peer pid comes
from SO_PEERCRED; we walk its parents and look for the supervised pid of a running
execution, checking the recorded start time so a reused pid cannot pose as the run.
"""

from __future__ import annotations

import sqlite3

from alpd.errors import PinOutsideExecution
from alpd.services.context import Caller
from alpd.store.db import Store
from alpd.supervisor.processes import ProcessIdentity, ancestry, is_alive


async def execution_of_caller(store: Store, caller: Caller) -> sqlite3.Row:
    rows = await store.fetchall(
        "SELECT * FROM executions WHERE status = 'running' AND pid IS NOT NULL AND owner_uid = ?",
        (caller.uid,),
    )
    by_pid = {row["pid"]: row for row in rows}
    for pid in ancestry(caller.pid):
        row = by_pid.get(pid)
        if row is None:
            continue
        identity = ProcessIdentity(row["pid"], row["pid_start_time"] or 0.0, row["boot_id"] or "")
        if is_alive(identity):
            return row
    raise PinOutsideExecution(
        "this process is not inside a running alp execution; pins and delegation work only "
        "from the process tree of a run (`alp thread continue …`)",
        pid=caller.pid,
    )
