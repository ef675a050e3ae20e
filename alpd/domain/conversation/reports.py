"""Reports: how a run that no person watched tells its thread what happened.

Every root that is not `interactive` — a push, a scheduled fire, a delivered round, `temp`
work — and every `sub-agent` child ends with one report in its thread: its outcome, its
final message, cost and duration. The rules, in the order they apply:

1. The final message is the run's last reply from its transcript (the runtime's own words),
   else — for the `command` runtime, or a run that left no reply — the last `TAIL_LINES`
   lines of its output. Either way at most `MESSAGE_MAX_CHARS` characters are kept: the end
   of the text, where a conclusion is, with a marker saying what was cut.
   A run that did not complete leads with the runtime's own error line when its output has
   one (`protocol.runtime_output.first_error_line`: `Not logged in · Please run /login`),
   so the first line — what `alp activity` and a notification show — is the cause; the
   output's JSON event lines are then left out of the rest (they are the runtime's raw
   stream, which `alp execution logs --raw` keeps), its plain lines kept.
2. The message is secret-filtered (`alpd.domain.secrets.filter.redact`) before it is stored or
   announced; the filter's findings are counted, never kept.
3. An announcement (`notification`) is one title line and a short body — the thread's title
   and what ended how — for a desktop notifier that shows a few lines at most.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from alpd.domain.secrets.filter import redact
from protocol.runtime_output import event_of

TAIL_LINES: Final = 20
MESSAGE_MAX_CHARS: Final = 4000
NOTIFICATION_BODY_CHARS: Final = 240
_CUT: Final = "[… earlier output cut]\n"


@dataclass(frozen=True, slots=True)
class FinalMessage:
    text: str
    #: `transcript` (the runtime's last reply) or `output` (the end of what it printed)
    source: str
    redactions: int


def last_lines(text: str, lines: int = TAIL_LINES) -> str:
    """The last `lines` lines of `text` (split at newlines only), trailing blanks dropped."""
    return "\n".join(text.rstrip().split("\n")[-lines:])


def _capped(text: str) -> str:
    if len(text) <= MESSAGE_MAX_CHARS:
        return text
    return _CUT + text[-(MESSAGE_MAX_CHARS - len(_CUT)) :]


def final_message(
    last_reply: str | None, output: str | None, error_line: str | None = None
) -> FinalMessage:
    """The report's message: the last reply if there is one, else the output's last lines;
    led by `error_line` when given (rule 1)."""
    if last_reply and last_reply.strip():
        text, source = last_reply.strip(), "transcript"
    elif error_line:
        plain = [line for line in (output or "").split("\n") if event_of(line) is None]
        text, source = last_lines("\n".join(plain)), "output"
    else:
        text, source = last_lines(output or ""), "output"
    if error_line:
        rest = _capped(text) if text and text.strip() != error_line else ""
        text = error_line + ("\n\n" + rest if rest else "")
    else:
        text = _capped(text)
    filtered = redact(text)
    return FinalMessage(filtered.text, source, len(filtered.findings))


def notification(
    *, thread_title: str | None, kind: str, outcome: str, message: str, cost_usd: float | None
) -> tuple[str, str]:
    """(title, body) for a desktop notification of one report."""
    title = f"alp · {' '.join((thread_title or 'untitled thread').split())[:60]}"
    cost = f" · ${cost_usd:.2f}" if cost_usd is not None else ""
    first = " ".join(message.split())
    if len(first) > NOTIFICATION_BODY_CHARS:
        first = first[: NOTIFICATION_BODY_CHARS - 1] + "…"
    return title, f"{kind} run {outcome}{cost}" + (f": {first}" if first else "")


__all__ = [
    "MESSAGE_MAX_CHARS",
    "TAIL_LINES",
    "FinalMessage",
    "final_message",
    "last_lines",
    "notification",
]
