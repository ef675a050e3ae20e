"""What a continue leaves out, taken from its thread (issue 22, points 5 and 6).

- **Where**: a root runs in the thread's workspace (the directory it was made in, written
  once when the thread was created) unless the person names one for that root (`cwd`,
  `alp thread continue --cwd DIR`). A root run elsewhere moves nothing: the next root, and
  every push, scheduled fire or round the daemon opens (`conversation/wake.py`), runs in the
  thread's workspace again.
- **Which agent**: the agent of the thread's last root, unless the request names an agent
  or a runtime (a runtime alone means that runtime's own agent, as before).
"""

from __future__ import annotations

import msgspec

from alpd.errors import ThreadNotFound
from alpd.store.db import Store
from alpd.store.runs import thread_run_defaults
from protocol import messages as m


async def continue_defaults(store: Store, params: m.ContinueParams) -> m.ContinueParams:
    """`params` with the thread's workspace and last agent where the request left them out."""
    if params.cwd is not None and (params.agent is not None or params.runtime is not None):
        return params
    found = await thread_run_defaults(store, params.thread_id)
    if found is None:
        raise ThreadNotFound(
            f"no thread {params.thread_id!r}; `alp thread list --all` shows yours",
            threadId=params.thread_id,
        )
    workspace, last_agent = found
    agent = params.agent
    if agent is None and params.runtime is None:
        agent = last_agent
    return msgspec.structs.replace(params, cwd=params.cwd or workspace, agent=agent)


__all__ = ["continue_defaults"]
