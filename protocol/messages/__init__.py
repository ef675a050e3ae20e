"""Wire types: the params and result of every method, as msgspec Structs.

Compatibility rules (msgspec's schema-evolution guide): a new field gets a default; an
existing field never changes type or meaning; names are camelCase on the wire. Optional
fields are omitted when unset, so old clients see nothing new unless they ask.

Everyone reads them from here (`from protocol import messages as m`); they are written by
domain, one module each: `base` (`Wire`, shared value types, the bounds of params),
`daemon`, `threads` (and `events/subscribe`), `executions` (and reports), `history`,
`handoffs` (and the inbox), `thread_show` (and clear, undo, recap), `delivery`,
`schedules`, `ps` (and `activity/list`), `transcript` (and `thread/adopt`), `memory` (and
its inbox items), `channels` (and `thread/say`, `approval/request`), `checkpoints`
(`thread/diff`, `thread/restore`), `bundles` (`thread/export`, `thread/import`), `budgets`
(`thread/budget`, `budget/warning`). Each module's `__all__` is what it adds here.
"""

from __future__ import annotations

from protocol.messages.base import *  # noqa: F403
from protocol.messages.base import Wire
from protocol.messages.budgets import *  # noqa: F403
from protocol.messages.budgets import BudgetWarning
from protocol.messages.bundles import *  # noqa: F403
from protocol.messages.channels import *  # noqa: F403
from protocol.messages.checkpoints import *  # noqa: F403
from protocol.messages.daemon import *  # noqa: F403
from protocol.messages.delivery import *  # noqa: F403
from protocol.messages.executions import *  # noqa: F403
from protocol.messages.executions import ExecutionChanged, ThreadReport
from protocol.messages.handoffs import *  # noqa: F403
from protocol.messages.handoffs import HandoffDelivered, InboxChanged
from protocol.messages.history import *  # noqa: F403
from protocol.messages.history import HistoryProgress
from protocol.messages.memory import *  # noqa: F403
from protocol.messages.ps import *  # noqa: F403
from protocol.messages.schedules import *  # noqa: F403
from protocol.messages.schedules import ScheduleChanged
from protocol.messages.thread_show import *  # noqa: F403
from protocol.messages.threads import *  # noqa: F403
from protocol.messages.threads import ThreadChanged
from protocol.messages.transcript import *  # noqa: F403
from protocol.messages.transcript import TranscriptItems

#: every server → client notification (sent after `events/subscribe`), by method
NOTIFICATIONS: dict[str, type[Wire]] = {
    "thread/changed": ThreadChanged,
    "execution/changed": ExecutionChanged,
    "thread/report": ThreadReport,
    "history/progress": HistoryProgress,
    "schedule/changed": ScheduleChanged,
    "handoff/delivered": HandoffDelivered,
    "inbox/changed": InboxChanged,
    "thread/transcript": TranscriptItems,
    "budget/warning": BudgetWarning,
}
