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
        "SELECT * FROM executions WHERE owner_uid = ? AND ("
        "(status = 'running' AND pid IS NOT NULL) OR "
        "(status = 'reserved' AND headless = 0 AND launcher_pid IS NOT NULL))",
        (caller.uid,),
    )
    by_pid = {row["pid"]: row for row in rows if row["pid"] is not None}
    # An interactive run can pin before its client has attached it (the client starts the
    # runtime, then registers its pid): until then the client itself, the launcher, stands
    # for the run — for its descendants only, never for the client's own calls.
    by_launcher = {row["launcher_pid"]: row for row in rows if row["status"] == "reserved"}
    chain = ancestry(caller.pid)
    for depth, pid in enumerate(chain):
        row = by_pid.get(pid)
        if row is not None:
            identity = ProcessIdentity(
                row["pid"], row["pid_start_time"] or 0.0, row["boot_id"] or ""
            )
            if is_alive(identity):
                return row
        launched = by_launcher.get(pid)
        if launched is not None and depth > 0:
            return launched
    raise PinOutsideExecution(
        "this process is not inside a running alp execution; pins and delegation work only "
        "from the process tree of a run (`alp thread continue …`)",
        pid=caller.pid,
    )
