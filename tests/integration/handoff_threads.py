"""Threads for the handoff tests: a daemon whose agents are scripts, and helpers.

Agent `watch` copies the prompt it gets on stdin to `work/stdin-$ALP_EXECUTION_ID`; `hold`
does too, then runs until the file `work/release` exists (a busy thread). `taker` waits for
`work/go`, then asks `delivery/pending` and acknowledges it (`delivery/ack`) as a runtime
hook does, and writes what it took to `work/taken-$ALP_EXECUTION_ID`. `decider` tries to
confirm the inbox item named in `work/item` from inside its run, logging alp's answer to
`work/decider.log`.
Agent `relay` does that too, then hands off back to the thread that woke it (found from the
envelope line of its prompt) with `alp handoff`, logging what alp answered: two relay threads
play the ping-pong the loop guards must stop. Agent `ring` pushes (`alp push`, not a
handoff) to its own thread, logging to `work/ring.log`: a thread whose every run wakes the
next; `burst` pushes seven times to its own thread (log `work/burst.log`). Agent `flaky`
runs a program that exists or, with `write_config(broken=True)` and a reload, one that does
not: then every delivery to its thread fails before it is stored.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from daemons import roots
from polling import wait_for

from alpd.testing.daemon import DaemonProcess

ALP = f"{sys.executable} -m alpctl"

CONFIG = """
[handoff]
pairQuota = {quota}
reservationSeconds = {reservation}

[agents.watch]
runtime = "command"
args = ["sh", "-c", "cat > \\"{work}/stdin-$ALP_EXECUTION_ID\\""]

[agents.relay]
runtime = "command"
args = ["sh", "-c", '''
p="$(cat)"; printf %s "$p" > "{work}/stdin-$ALP_EXECUTION_ID"
case "$p" in *'handoff from thread "ping"'*) to=ping ;; *'from thread "pong"'*) to=pong ;;
  *) exit 0 ;; esac
{alp} handoff "$to" -- "reply from $ALP_THREAD_ID" >> "{work}/relay.log" 2>&1
echo "exit $?" >> "{work}/relay.log"
''']

[agents.ring]
runtime = "command"
args = ["sh", "-c", '''
cat > "{work}/stdin-$ALP_EXECUTION_ID"
{alp} push "$ALP_THREAD_ID" --from ring --agent ring -- "again" >> "{work}/ring.log" 2>&1
echo "exit $?" >> "{work}/ring.log"
''']

[agents.burst]
runtime = "command"
args = ["sh", "-c", '''
cat > /dev/null
for i in 1 2 3 4 5 6 7; do
  {alp} push "$ALP_THREAD_ID" --from burst --agent watch -- "burst $i" >> "{work}/burst.log" 2>&1
  echo "exit $?" >> "{work}/burst.log"
done
''']

[agents.hold]
runtime = "command"
args = ["sh", "-c", "cat > \\"{work}/stdin-$ALP_EXECUTION_ID\\"; while [ ! -f \\"{work}/release\\" ]; do sleep 0.05; done"]

[agents.taker]
runtime = "command"
args = ["sh", "-c", '''
while [ ! -f "{work}/go" ]; do sleep 0.05; done
{python} -c 'import json, os, sys; from alpctl.client import Client
with Client.connect(os.environ["ALP_SOCKET"]) as c: r = c.call("delivery/pending", {{}}); json.dump(r, sys.stdout); c.call("delivery/ack", {{"ids": [d["id"] for d in r["deliveries"]]}})' > "{work}/taken-$ALP_EXECUTION_ID"
''']

[agents.decider]
runtime = "command"
args = ["sh", "-c", '''
{alp} inbox confirm "$(cat "{work}/item")" > "{work}/decider.log" 2>&1; echo "exit $?" >> "{work}/decider.log"
''']

[agents.flaky]
runtime = "command"
args = {flaky}
"""  # noqa: E501

#: the `flaky` agent's arguments: a program that runs, or one that does not exist
WORKING = '["sh", "-c", "cat > /dev/null"]'
BROKEN = '["/nonexistent/flaky-program"]'


def handoff_config(
    work: Path, *, quota: int = 6, reservation: float = 60, broken: bool = False
) -> str:
    """The config.toml of the agents above, whose files go to `work`."""
    return CONFIG.format(
        work=work,
        alp=ALP,
        python=sys.executable,
        quota=quota,
        reservation=reservation,
        flaky=BROKEN if broken else WORKING,
    )


def write_config(
    base: Path, *, quota: int = 6, reservation: float = 60, broken: bool = False
) -> Path:
    """Rewrite `base/config.toml` (where `start_alpd` put it) for a `daemon/reload`."""
    path = base / "config.toml"
    path.write_text(
        handoff_config(base / "work", quota=quota, reservation=reservation, broken=broken)
    )
    return path


def call(d: DaemonProcess, method: str, params: dict[str, Any]) -> dict[str, Any]:
    result = d.call(method, params)
    assert isinstance(result, dict)
    return result


def settled(d: DaemonProcess, thread_id: str) -> bool:
    return all(root["status"] == "settled" for root in roots(d, thread_id))


def thread(d: DaemonProcess, work: Path, title: str, agent: str | None = "watch") -> str:
    """A thread titled `title` whose last root ran `agent` (so deliveries run it too)."""
    made = call(d, "thread/create", {"title": title, "cwd": str(work)})
    if agent is not None:
        call(d, "thread/push", {"threadId": made["id"], "text": "seed", "source": "setup",
                                "agent": agent})  # fmt: skip
        wait_for(lambda: settled(d, made["id"]), what=f"{title}'s first root")
    return str(made["id"])


def blocker(d: DaemonProcess, work: Path, thread_id: str) -> str:
    """Make the thread busy with a `hold` root (until `work/release` exists)."""
    pushed = call(d, "thread/push", {"threadId": thread_id, "text": "hold on", "source": "setup",
                                     "agent": "hold"})  # fmt: skip
    return str(pushed["execution"]["id"])


def prompt_of(d: DaemonProcess, work: Path, execution_id: str) -> str:
    """The prompt a `watch` or `relay` run got (once it has settled)."""
    d.call("execution/wait", {"executionId": execution_id, "timeout": 60})
    return (work / f"stdin-{execution_id}").read_text()


def handoff(d: DaemonProcess, target: str, summary: str, **extra: Any) -> dict[str, Any]:
    return call(d, "handoff/send", {"target": target, "summary": summary, **extra})


def show(d: DaemonProcess, thread_id: str) -> dict[str, Any]:
    return call(d, "thread/show", {"threadId": thread_id})
