"""Text for `alp schedule`, `alp ps` and `alp activity`: result dicts in, lines out.

Stdlib only, like the rest of alpctl. Times arrive in UTC and are shown in the local zone;
a schedule's zone defaults to this machine's (`local_zone`: `$TZ`, else /etc/localtime's
target).
"""

from __future__ import annotations

import os
import time

from alpctl.clock import local_time
from alpctl.render import duration

# Annotations only: importing `typing` would cost every CLI call ~1.5 ms.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "activity",
    "local_zone",
    "ps",
    "run_result",
    "schedule_detail",
    "schedule_list",
]


def local_zone() -> str:
    """This machine's IANA zone name: $TZ when it names one, else /etc/localtime's target."""
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz and ("/" in tz or tz == "UTC") and not tz.startswith("/"):
        return tz
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        return "UTC"
    return target.split("zoneinfo/", 1)[1] if "zoneinfo/" in target else "UTC"


# rendering


def cost(value: float | None) -> str:
    return "-" if value is None else f"${value:.4f}" if value < 1 else f"${value:.2f}"


def schedule_line(s: dict[str, Any]) -> str:
    state = s["status"] if s["status"] != "active" else f"next {local_time(s.get('nextFireAt'))}"
    last = s.get("lastResult") or "-"
    title = s.get("threadTitle") or s["threadId"]
    why = "  (wakes the thread: usage limit reset)" if s.get("reason") == "usage-limit" else ""
    return (
        f"{s['id']}  {state:<22} {s['rule']:<34} last {last:<11} "
        f"runs {s.get('runs', 0):<4} {cost(s.get('costUsd')):>9}  {title}{why}"
    )


def schedule_list(result: dict[str, Any]) -> str:
    schedules = result["schedules"]
    if not schedules:
        return "no schedules; `alp schedule add THREAD --every 1h -- PROMPT` makes one"
    return "\n".join(schedule_line(s) for s in schedules)


def schedule_detail(s: dict[str, Any]) -> str:
    lines = [
        f"{s['id']}  {s['status']}" + (f" ({s['stopReason']})" if s.get("stopReason") else ""),
        f"  thread     {s.get('threadTitle') or '(untitled)'} ({s['threadId']})",
        f"  rule       {s['rule']}   catch-up {s['catchUp']}"
        + ("   notify" if s.get("notify") else ""),
        f"  next fire  {local_time(s.get('nextFireAt'))}",
        f"  last fire  {local_time(s.get('lastFireAt'))}   result {s.get('lastResult') or '-'}",
        f"  runs       {s.get('runs', 0)}   missed {s.get('missed', 0)}   "
        f"cost {cost(s.get('costUsd'))}",
        f"  prompt     {s['prompt']}",
    ]
    if s.get("agent") or s.get("runtime"):
        lines.insert(3, f"  agent      {s.get('agent') or '-'}   runtime {s.get('runtime') or '-'}")
    if s.get("timeoutSeconds") or s.get("budgetUsd"):
        timeout = duration(s["timeoutSeconds"]) if s.get("timeoutSeconds") else "the agent's"
        budget = f"${s['budgetUsd']:.2f}" if s.get("budgetUsd") else "the agent's"
        lines.append(f"  limits     each run ends after {timeout} or at {budget}")
    if s.get("reportTo") is not None:
        lines.append(f"  reports to {', '.join(s['reportTo'])} (and its thread)")
    if s.get("reason") == "usage-limit":
        lines.append(f"  made by    alp: {s.get('wakeOf')} hit its usage limit; this wakes it")
    if s.get("queuedFireAt"):
        lines.append(f"  queued     a fire of {local_time(s['queuedFireAt'])} waits for the thread")
    return "\n".join(lines)


def run_result(result: dict[str, Any]) -> str:
    schedule = result["schedule"]
    if result["status"] == "started":
        return f"{schedule['id']}: started {result['execution']['id']}"
    return f"{schedule['id']}: the thread is busy; the run waits for it to settle"


def _megabytes(count: int) -> str:
    return f"{count / (1024 * 1024):.0f} MB"


def budget_line(b: dict[str, Any]) -> str:
    """`thread th_… soft   4.2100 of 5.00 USD (soft 4.00)`."""
    parts = []
    if "usd" in b:
        soft = f" (soft {b['softUsd']:.2f})" if "softUsd" in b else ""
        parts.append(f"{b.get('spentUsd', 0.0):.4f} of {b['usd']:.2f} USD{soft}")
    if "tokens" in b:
        soft = f" (soft {b['softTokens']:,})" if "softTokens" in b else ""
        parts.append(f"{b.get('spentTokens', 0):,} of {b['tokens']:,} tok{soft}")
    if "windowPercent" in b:
        parts.append(window_shown(b))
    return f"{b['scope']:<8} {b['targetId']:<28} {b.get('level', 'ok'):<5} {', '.join(parts)}"


def window_shown(b: dict[str, Any]) -> str:
    """`window 85% of 80% (soft 60%)`, or `window not reported of 80%`."""
    soft = f" (soft {b['softWindowPercent']:g}%)" if "softWindowPercent" in b else ""
    used = b.get("windowUsedPercent")
    shown = "not reported" if used is None else f"{used:g}%"
    return f"window {shown} of {b['windowPercent']:g}%{soft}"


def window_line(w: dict[str, Any]) -> str:
    """`codex    primary   42% of 300 min, resets 2026-12-02 09:41 CET`."""
    length = f" of {w['windowMinutes']} min" if "windowMinutes" in w else ""
    reset = ""
    if "resetsAt" in w:
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(w["resetsAt"]))
        reset = f", resets {local_time(at)}"
    return f"{w['runtime']:<8} {w['name']:<9} {w['usedPercent']:g}%{length}{reset}"


def ps(result: dict[str, Any]) -> str:
    daemon = result["daemon"]
    lines = [
        f"alpd {daemon['version']}  pid {daemon['pid']}  up {duration(daemon['uptimeSeconds'])}"
        f"  rss {_megabytes(daemon['rssBytes'])}",
        "",
    ]
    jobs = result["jobs"]
    hidden = f" ({result['hidden']} temp hidden: --all)" if result.get("hidden") else ""
    lines.append(f"RUNNING {len(jobs)}{hidden}   cost so far {cost(result.get('costUsd'))}")
    for job in jobs:
        title = job.get("threadTitle") or job.get("threadId") or "(legacy)"
        child = "  └ " if job.get("parentId") else ""
        lines.append(
            f"  {child}{job['kind']:<11} {job['runtime']}/{job['agent']:<14} "
            f"pid {job.get('pid') or '-':<7} {duration(job['elapsedSeconds']):>8} "
            f"{job.get('tokens', 0):>9} tok {cost(job.get('costUsd')):>9}  {title}"
            + (f"  @{job['host']}" if job.get("host") else "")
        )
        burn = job.get("burnUsdPerHour")
        if burn is not None:
            ahead = job.get("forecastUsd")
            by_limit = (
                f", {cost(ahead)} by its {duration(job['timeoutSeconds'])} limit"
                if ahead is not None and job.get("timeoutSeconds")
                else ""
            )
            lines.append(f"  {child}  burn {cost(burn)}/h{by_limit}")
    queued = result["queued"]
    lines.append(f"QUEUED {len(queued)}")
    for item in queued:
        title = item.get("threadTitle") or item["threadId"]
        how = "for its hook" if item.get("route") == "inject" else "for its settle"
        lines.append(
            f"  {item['kind']:<11} from {item['source']:<30} since {local_time(item['queuedAt'])}"
            f"  {how:<14} {title}"
        )
    schedules = result["schedules"]
    lines.append(f"SCHEDULES {len(schedules)}")
    lines.extend("  " + schedule_line(s) for s in schedules)
    budgets = result.get("budgets") or []
    if budgets:
        lines.append(f"BUDGETS {len(budgets)}")
        lines.extend("  " + budget_line(b) for b in budgets)
    windows = result.get("windows") or []
    if windows:
        lines.append(f"WINDOWS {len(windows)}")
        lines.extend("  " + window_line(w) for w in windows)
    leftovers = result.get("leftovers") or []
    if leftovers:
        lines.append(f"LEFT BEHIND {len(leftovers)}  (alive after their run settled)")
        for left in leftovers:
            lines.append(
                f"  pid {left['pid']:<7} of {left['executionId']} "
                f"({left.get('outcome') or 'settled'})  {left['command']}"
            )
    lines.append("SERVICES")
    for task in result["services"]:
        error = f"  last error: {task['lastError']}" if task.get("lastError") else ""
        pid = f"pid {task['pid']}  " if task.get("pid") else ""
        lines.append(
            f"  {task['name']:<17} {task['state']:<8} {local_time(task.get('lastRunAt'))}"
            f"  {pid}{task.get('detail') or ''}{error}"
        )
    from alpctl.recap_render import recap_state_line
    from alpctl.render import meaning_state_line

    extra = [recap_state_line(result.get("recap")), meaning_state_line(result.get("search"))]
    return "\n".join([*lines, *(line for line in extra if line)])


def activity(result: dict[str, Any]) -> str:
    items = result["items"]
    if not items:
        return "nothing ran in that window"
    lines = []
    for item in items:
        title = item.get("threadTitle") or item.get("threadId") or "(legacy)"
        outcome = item.get("outcome") or item["status"]
        origin = item["origin"]
        why = origin.get("pushSource") or origin.get("scheduleId") or origin.get("door", "")
        if origin.get("missed"):
            why += f" (+{origin['missed']} missed)"
        lines.append(
            f"{local_time(item.get('at') or item['createdAt'])}  {item['kind']:<11} {outcome:<11} "
            f"{duration(item.get('durationSeconds')):>8} {cost(item.get('costUsd')):>9}  "
            f"{title}  [{why}]"
        )
        # the report's first line: a failed run's leads with the runtime's own error; the
        # marker of a cut output is not a line worth the room
        said = [
            line for line in (item.get("report") or "").splitlines()
            if line.strip() and not line.startswith("[… earlier output cut]")
        ]  # fmt: skip
        if said:
            lines.append("    " + said[0][:160])
    imported = sum(1 for item in items if item.get("imported"))
    total = f"total {cost(result.get('costUsd'))} over {len(items) - imported} run(s)"
    if imported:
        total += (
            f"; {imported} imported session(s) at their own dates, not counted "
            f"({cost(result.get('importedCostUsd'))} as they reported)"
        )
    lines.append(total)
    return "\n".join(lines)
