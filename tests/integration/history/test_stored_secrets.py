"""Everything alpd stores is secret-filtered, and its home is private (issue 8, points 9-10).

One scenario puts credentials everywhere a person or a run can put them — a thread title, a
pin, a run's output (a 4096-bit key whose BEGIN line falls before the 2 KiB tail), a settle
summary, a transcript's prompt and JSON tool input — without ever placing one in a policy's
`args` (tests/integration/runs/test_run_secrets.py does: they are stored filtered). Then:

* no byte of any file in the home (database, WAL, execution directories) holds one, except
  the run's own stdout/stderr logs, which are its output as it printed it;
* every TEXT/BLOB column of the migrated schema is either shown to hold a redaction marker
  after the scenario or is in `ALLOWED_COLUMNS` with the reason it cannot hold a secret; a
  new column that is neither fails the test, and so does a new file in an execution
  directory;
* the home, `executions/` and everything under them is 0700 (directories) or 0600 (files).
"""

from __future__ import annotations

import json
import re
import sqlite3
import stat
import sys
from pathlib import Path

import pytest
from daemons import StartAlpd
from transcripts import Claude

from alpd.testing.daemon import DaemonProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "secrets"))
from polling import wait_for
from secrets_corpus import corpus

TOKEN = "ghp_" + "Zq3xW9vR2mK7pL4nT8sY1bC6dF0gH5jA9eU2"
PIN_TOKEN = "glpat-" + "Xy7Qw3Er9Ty1Ui5Op2As"
TITLE_TOKEN = "hvs." + "CAESIJ7m2Xq9Lk3Zp8Rt4Vw1Yb6Nc0Hd5Fg2Sj7"
SUMMARY_PASSWORD = "Wq8#tR2!vZ6pLm4x"
JSON_PASSWORD = "Hk3$uY7@oP1sDf5g"
KEY_SAMPLE = next(s for s in corpus(1) if s.kind == "rsa_4096_private_key")
SECRETS = [TOKEN, PIN_TOKEN, TITLE_TOKEN, SUMMARY_PASSWORD, JSON_PASSWORD, *KEY_SAMPLE.secrets]

# Columns that hold a redaction marker once the scenario ran: each is filtered on its way in.
FILTERED_COLUMNS = {
    ("threads", "title"),
    ("executions", "summary"),
    ("executions", "output_tail"),
    ("checkpoints", "body"),
    ("snapshots", "body"),
    ("history_entries", "text"),
    ("history_entries", "tool_input"),
    ("history_entries", "output_tail"),
    ("thread_docs", "title"),
    ("thread_docs", "context"),
    ("deliveries", "source"),
    ("deliveries", "text"),
    ("reports", "message"),
    ("schedules", "prompt"),
    ("handoffs", "summary"),
    ("memory_versions", "text"),
    ("memory_fts", "text"),
    ("memory_fts_content", "c0"),
    ("memory_proposals", "text"),
}
_ID = "an id alpd or a runtime generated"
_TIME = "a timestamp alpd wrote"
_ENUM = "one of a fixed set of words (CHECK constraint or code)"
_DIGEST = "a sha256 digest alpd computed"
_PATH = "a filesystem path (a workspace, a transcript, an execution directory)"
_FTS = "the FTS5 index of search_docs, a view over history_entries and thread_docs (filtered)"
ALLOWED_COLUMNS: dict[tuple[str, str], str] = {
    ("threads", "id"): _ID,
    ("threads", "workspace"): _PATH,
    ("threads", "workspace_remote"): "a git remote normalised: its user and password dropped "
    "(alpd/domain/threads/repository.py; a token in the URL is never kept)",
    ("threads", "workspace_subpath"): _PATH,
    ("threads", "status"): _ENUM,
    ("threads", "created_at"): _TIME,
    ("threads", "updated_at"): _TIME,
    ("threads", "closed_at"): _TIME,
    ("threads", "archived_at"): _TIME,
    ("thread_revisions", "thread_id"): _ID,
    ("thread_revisions", "change"): _ENUM,
    ("thread_revisions", "at"): _TIME,
    ("thread_revisions", "detail"): "the id of the execution the revision is about",
    ("executions", "id"): _ID,
    ("executions", "thread_id"): _ID,
    ("executions", "root_id"): _ID,
    ("executions", "parent_id"): _ID,
    ("executions", "runtime"): "a runtime name from the agents config",
    ("executions", "agent"): "an agent name from the agents config",
    ("executions", "kind"): _ENUM,
    ("executions", "origin"): "how the run was started (door, uid, parent id): alpd's words",
    ("executions", "status"): _ENUM,
    ("executions", "outcome"): _ENUM,
    ("executions", "policy"): (
        "the authorized policy: its `args` are secret-filtered, with the digest of the "
        "verbatim ones (policy version 3; tests/integration/runs/test_run_secrets.py puts a "
        "token there); never indexed for search"
    ),
    ("executions", "policy_hash"): _DIGEST,
    ("executions", "context_digest"): _DIGEST,
    ("executions", "cwd"): _PATH,
    ("executions", "exec_dir"): _PATH,
    ("executions", "boot_id"): _ID,
    ("executions", "native_session_id"): _ID,
    ("executions", "transcript_path"): _PATH,
    ("executions", "usage"): "token counts (JSON numbers)",
    ("executions", "history_level"): _ENUM,
    ("executions", "created_at"): _TIME,
    ("executions", "started_at"): _TIME,
    ("executions", "settled_at"): _TIME,
    ("snapshots", "thread_id"): _ID,
    ("snapshots", "digest"): _DIGEST,
    ("snapshots", "previous_digest"): _DIGEST,
    ("snapshots", "created_at"): _TIME,
    ("compactions", "thread_id"): _ID,
    ("compactions", "body"): (
        "the lines a snapshot cap dropped: pins and outcomes, filtered when they came in "
        "(context/pin, execution settle), copied from the snapshot being projected"
    ),
    ("compactions", "created_at"): _TIME,
    ("checkpoints", "execution_id"): _ID,
    ("checkpoints", "digest"): _DIGEST,
    ("checkpoints", "updated_at"): _TIME,
    ("history_entries", "execution_id"): _ID,
    ("history_entries", "native_id"): _ID,
    ("history_entries", "role"): _ENUM,
    ("history_entries", "kind"): _ENUM,
    ("history_entries", "tool_name"): "a tool's name as the runtime declares it",
    ("history_entries", "output_sha256"): _DIGEST,
    ("history_entries", "digest"): _DIGEST,
    ("history_entries", "ts"): _TIME,
    ("history_entries", "model"): "a model id",
    ("history_entries", "usage"): "token counts (JSON numbers)",
    ("history_entries", "call_id"): _ID,
    ("history_cursors", "execution_id"): _ID,
    ("history_cursors", "path"): _PATH,
    ("history_cursors", "format"): _ENUM,
    ("history_cursors", "session_id"): _ID,
    ("history_cursors", "model"): "a model id",
    ("history_cursors", "usage"): "token counts (JSON numbers)",
    ("history_cursors", "links_to"): _ID,
    ("history_cursors", "link_kind"): _ENUM,
    ("history_cursors", "updated_at"): _TIME,
    ("history_cursors", "prefix_digest"): _DIGEST,
    ("thread_docs", "thread_id"): _ID,
    ("thread_docs", "source"): _TIME,
    ("deliveries", "thread_id"): _ID,
    ("deliveries", "kind"): _ENUM,
    ("deliveries", "agent"): "an agent name from the agents config",
    ("deliveries", "origin"): "how the run is started: alpd's words, ids, a filtered push label",
    ("deliveries", "source_kind"): _ENUM,
    ("deliveries", "envelope"): (
        "alpd's line around the filtered label (the leak test reads it; its brackets become "
        "parentheses, so the marker reads (REDACTED:…))"
    ),
    ("deliveries", "target_execution_id"): _ID,
    ("deliveries", "coalesce_key"): "a key alpd builds from ids (a schedule's)",
    ("deliveries", "status"): _ENUM,
    ("deliveries", "execution_id"): _ID,
    ("deliveries", "error"): "the message of a domain error alpd raised: alpd's words and ids",
    ("deliveries", "created_at"): _TIME,
    ("deliveries", "delivered_at"): _TIME,
    ("deliveries", "route"): _ENUM,
    ("deliveries", "how"): _ENUM,
    ("deliveries", "lease_execution_id"): _ID,
    ("deliveries", "lease_until"): _TIME,
    ("deliveries", "note"): "alpd's words and an execution id: why a delivery fell back",
    ("deliveries", "from_thread_id"): _ID,
    ("deliveries", "chain_id"): _ID,
    ("delivery_runs", "execution_id"): _ID,
    ("delivery_runs", "held_at"): _TIME,
    ("delivery_runs", "asked_at"): _TIME,
    ("channel_cursors", "channel"): _ENUM,
    ("channel_cursors", "account"): "a prefix of the sha256 of the bot's token, never the token",
    ("channel_senders", "channel"): _ENUM,
    ("channel_senders", "sender"): "a chat sender's numeric id, as the channel numbers people",
    ("channel_senders", "chat"): "a chat's numeric id, as the channel numbers chats",
    ("channel_senders", "name"): "the display name the channel showed at pairing",
    ("channel_senders", "paired_at"): _TIME,
    ("channel_chats", "channel"): _ENUM,
    ("channel_chats", "chat"): "a chat's numeric id, as the channel numbers chats",
    ("channel_chats", "thread_id"): _ID,
    ("channel_chats", "updated_at"): _TIME,
    ("channel_prompts", "nonce"): "a random one-time nonce alpd made; spent on first use",
    ("channel_prompts", "channel"): _ENUM,
    ("channel_prompts", "chat"): "a chat's numeric id, as the channel numbers chats",
    ("channel_prompts", "message"): "the id the channel gave the message it sent",
    ("channel_prompts", "subject"): _ENUM,
    ("channel_prompts", "subject_id"): _ID,
    ("channel_prompts", "created_at"): _TIME,
    ("channel_prompts", "answered_at"): _TIME,
    ("channel_prompts", "answer"): _ENUM,
    ("channel_seen", "channel"): _ENUM,
    ("channel_seen", "key"): "a WeCom callback's nonce or message id, prefixed by its kind",
    ("search_units", "execution_id"): _ID,
    ("search_units", "role"): _ENUM,
    ("search_chunks", "digest"): _DIGEST,
    ("search_generations", "fingerprint"): _DIGEST,
    ("search_generations", "embedder"): _ENUM,
    ("search_generations", "model"): (
        "the model's directory or an endpoint's model name, from the config the person wrote"
    ),
    ("search_generations", "created_at"): _TIME,
    ("search_generations", "ready_at"): _TIME,
    ("search_vectors", "digest"): _DIGEST,
    ("search_vectors", "vector"): "float16 numbers a model made from filtered text",
    ("reports", "thread_id"): _ID,
    ("reports", "execution_id"): _ID,
    ("reports", "kind"): _ENUM,
    ("reports", "agent"): "an agent name from the agents config",
    ("reports", "runtime"): "a runtime name from the agents config",
    ("reports", "origin"): "the execution's origin, copied (see executions.origin)",
    ("reports", "outcome"): _ENUM,
    ("reports", "message_source"): _ENUM,
    ("reports", "usage"): "token counts (JSON numbers)",
    ("reports", "parent_execution_id"): _ID,
    ("reports", "created_at"): _TIME,
    ("schedules", "id"): _ID,
    ("schedules", "thread_id"): _ID,
    ("schedules", "rule"): _ENUM,
    ("schedules", "expression"): "a cron expression or a duration alpd parsed and accepted",
    ("schedules", "timezone"): "an IANA zone name zoneinfo found",
    ("schedules", "anchor_at"): _TIME,
    ("schedules", "agent"): "an agent name from the agents config",
    ("schedules", "runtime"): "a runtime name from the agents config",
    ("schedules", "catch_up"): _ENUM,
    ("schedules", "reason"): "why alpd made the schedule: a fixed word (usage-limit), or none",
    ("schedules", "wake_of"): _ID,
    ("schedules", "report_to"): "a JSON array of destination words and thread ids alpd checked",
    ("budgets", "scope"): _ENUM,
    ("budgets", "target_id"): _ID,
    ("budgets", "warned"): _ENUM,
    ("budgets", "updated_at"): _TIME,
    ("rate_windows", "runtime"): _ENUM,
    ("rate_windows", "name"): _ENUM,
    ("rate_windows", "execution_id"): _ID,
    ("rate_windows", "observed_at"): _TIME,
    ("channel_mutes", "thread_id"): _ID,
    ("channel_mutes", "kind"): _ENUM,
    ("channel_mutes", "muted_at"): _TIME,
    ("hosts", "id"): _ID,
    ("hosts", "name"): "a host's name: [host] name from config.toml, or the machine's hostname",
    ("hosts", "registered_at"): _TIME,
    ("hosts", "renewed_at"): _TIME,
    ("hosts", "lease_until"): _TIME,
    ("hosts", "lost_at"): _TIME,
    ("hosts", "lost_to"): _ID,
    ("hosts", "back_at"): _TIME,
    ("persons", "name"): "a person: [person] name from config.toml, the database role or the "
    "login name",
    ("persons", "registered_at"): _TIME,
    ("executions", "host_id"): _ID,
    ("executions", "host_name"): "a host's name, as hosts.name",
    ("executions", "settled_by"): _ID,
    ("schedules", "host_id"): _ID,
    ("schedules", "status"): _ENUM,
    ("schedules", "stop_reason"): "the message of a domain error alpd raised, filtered anyway",
    ("schedules", "accounted_until"): _TIME,
    ("schedules", "next_fire_at"): _TIME,
    ("schedules", "firing_at"): _TIME,
    ("schedules", "last_fire_at"): _TIME,
    ("schedules", "created_at"): _TIME,
    ("schedules", "updated_at"): _TIME,
    ("schedule_fires", "schedule_id"): _ID,
    ("schedule_fires", "fire_time"): _TIME,
    ("schedule_fires", "host_id"): _ID,
    ("schedule_fires", "claimed_at"): _TIME,
    ("event_log", "payload"): "a reference to a row (method, ids, change, instance, number: "
    "alpd.domain.hosts.crossing), never the row",
    ("handoffs", "id"): _ID,
    ("handoffs", "source_thread_id"): _ID,
    ("handoffs", "source_execution_id"): _ID,
    ("handoffs", "target_thread_id"): _ID,
    ("handoffs", "artifacts"): "paths in the source's workspace, sizes and sha256 digests",
    ("handoffs", "chain_id"): _ID,
    ("handoffs", "slot"): _ENUM,
    ("handoffs", "holder"): "the id of the alpd instance that reserved the slot",
    ("handoffs", "status"): _ENUM,
    ("handoffs", "path"): _ENUM,
    ("handoffs", "error"): "the message of a domain error alpd raised: alpd's words and ids",
    ("handoffs", "created_at"): _TIME,
    ("handoffs", "decided_at"): _TIME,
    ("context_steps", "thread_id"): _ID,
    ("context_steps", "kind"): _ENUM,
    ("context_steps", "execution_id"): _ID,
    ("context_steps", "requested_by"): "`uid:N`: alpd's words",
    ("context_steps", "door"): "a door name: one short lowercase word (the param's pattern)",
    ("context_steps", "at"): _TIME,
    **{
        ("recaps", column): (
            "a model's reply, secret-filtered before it is stored (parse_recap_reply; "
            "tests/unit/recap/test_recap.py) — no recap is made in this scenario"
        )
        for column in ("headline", "gist", "open_tasks")
    },
    ("recaps", "thread_id"): _ID,
    ("recaps", "execution_id"): _ID,
    ("recaps", "digest"): _DIGEST,
    ("recaps", "made_at"): _TIME,
    ("recap_failures", "thread_id"): _ID,
    ("recap_failures", "failed_at"): _TIME,
    ("root_derived", "execution_id"): _ID,
    ("root_derived", "recap_made_at"): _TIME,
    ("root_derived", "recap_digest"): _DIGEST,
    ("root_derived", "tail_from"): _ID,
    ("root_derived", "digest"): _DIGEST,
    **{
        ("memory_versions", column): reason
        for column, reason in (
            ("memory_id", _ID),
            ("kind", _ENUM),
            ("scope", _ENUM),
            ("workspace", _PATH),
            ("status", _ENUM),
            ("confirmed_at", _TIME),
            ("at", _TIME),
            ("change", _ENUM),
            ("previous_digest", _DIGEST),
            ("digest", _DIGEST),
            (
                "provenance",
                "`uid:N`, a door name, ids, a context revision, a cited path and its "
                "sha256, and the thread's title copied from threads.title (filtered there)",
            ),
        )
    },
    **{
        ("memories", column): reason
        for column, reason in (
            ("id", _ID),
            ("scope", _ENUM),
            ("workspace", _PATH),
            ("kind", _ENUM),
            ("status", _ENUM),
            ("digest", _DIGEST),
            ("confirmed_at", _TIME),
            ("created_at", _TIME),
            ("updated_at", _TIME),
            ("thread_id", _ID),
            ("file_path", _PATH),
            ("file_sha256", _DIGEST),
        )
    },
    **{
        ("memory_proposals", column): reason
        for column, reason in (
            ("id", _ID),
            ("thread_id", _ID),
            ("execution_id", _ID),
            ("workspace", _PATH),
            ("scope", _ENUM),
            ("kind", _ENUM),
            ("file_path", _PATH),
            ("status", _ENUM),
            ("proposed_at", _TIME),
            ("decided_at", _TIME),
            ("memory_id", _ID),
        )
    },
    ("root_memories", "execution_id"): _ID,
    ("root_memories", "versions"): "memory ids and version numbers (JSON)",
    ("root_memories", "digest"): _DIGEST,
    **{
        (f"memory_fts{table}", column): "the FTS5 index of memory_fts (filtered text)"
        for table, column in (
            ("_config", "k"),
            ("_config", "v"),
            ("_data", "block"),
            ("_docsize", "sz"),
            ("_idx", "segid"),
            ("_idx", "term"),
            ("_idx", "pgno"),
        )
    },
    **{
        (f"search_{index}{table}", column): _FTS
        for index in ("words", "cjk")
        for table, column in (
            ("", "body"),
            ("_config", "k"),
            ("_config", "v"),
            ("_data", "block"),
            ("_docsize", "sz"),
            ("_idx", "segid"),
            ("_idx", "term"),
            ("_idx", "pgno"),
        )
    },
}
# Files of an execution directory: written filtered, or the run's own output.
FILTERED_FILES = {"session-context.md", "prompt"}
ALLOWED_FILES = {
    "stdout.log": "what the run printed, as it printed it (its tail is stored filtered)",
    "stderr.log": "what the run printed, as it printed it (its tail is stored filtered)",
    "exit-status": "the run's exit status, a number",
}


def text_columns(db: sqlite3.Connection) -> set[tuple[str, str]]:
    """Every column of every table that can hold text or bytes (TEXT, BLOB, untyped)."""
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    return {
        (table, column)
        for table in tables
        for _, column, declared, *_ in db.execute(f"PRAGMA table_info('{table}')")
        if declared.upper() in ("TEXT", "BLOB", "")
    }


def read_only(d: DaemonProcess) -> sqlite3.Connection:
    return sqlite3.connect(f"file:{d.home / 'alp.db'}?mode=ro", uri=True)


#: a script agent that echoes its prompt and prints a token it assembles (its policy's args
#: never hold one): its report must be filtered
ECHO_AGENT = f"""
[agents.echo]
runtime = "command"
args = ["sh", "-c", "cat; printf 'pushed with ghp_%s\\\\n' {TOKEN.removeprefix("ghp_")}"]
"""


@pytest.fixture(scope="module")
def d(start_module_alpd: StartAlpd, tmp_path_factory: pytest.TempPathFactory) -> DaemonProcess:
    daemon = start_module_alpd(ECHO_AGENT)
    run_scenario(daemon, tmp_path_factory.mktemp("work"))
    return daemon


def run_scenario(d: DaemonProcess, work: Path) -> None:
    (work / "pin.txt").write_text(f"deploy with {PIN_TOKEN}")
    (work / "out.txt").write_text(f"{KEY_SAMPLE.text}\nexport GITHUB_TOKEN={TOKEN}\n")
    done = d.cli(
        "--title", f"rotate {TITLE_TOKEN}", "--runtime", "command", "--",
        "sh", "-c", 'alp context pin decision -- "$(cat pin.txt)"', cwd=str(work),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    thread = json.loads(d.cli("thread", "list", "--json", cwd=str(work)).stdout)
    thread_id = (thread["threads"] if isinstance(thread, dict) else thread)[0]["id"]
    # A headless run prints the key (BEGIN line > 2 KiB before the end) and a token.
    done = d.cli(
        "thread", "continue", thread_id, "--json", "--runtime", "command", "--headless",
        "--wait", "--", "sh", "-c", "cat out.txt >&2", cwd=str(work),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    # An interactive root settled by its client with a summary.
    root = d.call(
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "args": ["true"], "cwd": str(work)},
    )
    assert isinstance(root, dict)
    d.call(
        "execution/settle",
        {
            "executionId": root["execution"]["id"],
            "outcome": "completed",
            "summary": f"logged in with password={SUMMARY_PASSWORD}",
        },
    )
    # A transcript: a secret in a prompt, and one in a JSON tool input only its key names.
    claude = Claude()
    transcript = work / "claude" / f"{claude.session}.jsonl"
    transcript.parent.mkdir()
    transcript.write_bytes(
        claude.prompt(f"use {TOKEN}")
        + claude.tool_call("Login", {"user": "ci", "password": JSON_PASSWORD}, "toolu_1")
        + claude.tool_result(KEY_SAMPLE.text + "\nok\n", "toolu_1")
    )
    d.call("history/import", {"runtime": "claude", "path": str(transcript.parent)})
    # A push with a token in its label and its text, run by a script that prints another:
    # the delivery, its envelope and the run's report are stored filtered.
    pushed = d.call(
        "thread/push",
        {"threadId": thread_id, "text": f"rotate {PIN_TOKEN}", "source": f"ci {TITLE_TOKEN}",
         "agent": "echo"},
    )  # fmt: skip
    assert isinstance(pushed, dict) and pushed["status"] == "started"
    with read_only(d) as db:
        wait_for(
            lambda: db.execute("SELECT count(*) FROM reports").fetchone()[0],
            what="the push's report",
        )
    # A memory the person writes, and one a run proposes, each with a token: stored filtered
    # (versions, the full-text index, the proposal); the proposal confirmed into a memory.
    d.call("memory/add", {"text": f"deploy with {TOKEN}", "cwd": str(work),
                          "file": str(work / "pin.txt")})  # fmt: skip
    propose = (
        "from alpctl.client import Client; import os, sys; "
        "Client.connect(os.environ['ALP_SOCKET']).call('memory/propose', {'text': sys.argv[1]})"
    )
    done = d.cli(
        "thread", "continue", thread_id, "--json", "--runtime", "command", "--headless",
        "--wait", "--", sys.executable, "-c", propose, f"rotate {PIN_TOKEN}", cwd=str(work),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    proposals = d.call("inbox/list", {})
    assert isinstance(proposals, dict)
    d.call("inbox/confirm", {"id": proposals["proposals"][0]["id"]})
    # A handoff whose summary holds a token, held in the target's inbox: stored filtered.
    target = d.call("thread/create", {"title": "build", "cwd": str(work)})
    assert isinstance(target, dict)
    d.call(
        "handoff/send",
        {"target": target["id"], "summary": f"deploy key {TOKEN}", "directive": True,
         "from": thread_id},
    )  # fmt: skip
    # A schedule whose prompt holds a token: stored filtered (it never fires here).
    d.call(
        "schedule/create",
        {"threadId": thread_id, "prompt": f"deploy with {TOKEN}", "every": "1h", "agent": "echo"},
    )
    with read_only(d) as db:
        wait_for(
            lambda: db.execute("SELECT count(*) FROM thread_docs").fetchone()[0],
            what="the thread's search document",
        )


def test_no_file_in_the_home_holds_a_secret_but_the_runs_own_logs(d: DaemonProcess) -> None:
    assert all(secret in KEY_SAMPLE.text for secret in KEY_SAMPLE.secrets)
    leaks = [
        (str(path.relative_to(d.home)), secret[:12])
        for path in d.home.rglob("*")
        if path.is_file() and path.name not in ALLOWED_FILES
        for secret in SECRETS
        if secret.encode() in path.read_bytes()
    ]
    assert leaks == []
    logs = b"".join(p.read_bytes() for p in d.home.glob("executions/*/stderr.log"))
    assert TOKEN.encode() in logs  # the scenario did print it


def test_every_text_column_is_filtered_or_allowed_with_a_reason(d: DaemonProcess) -> None:
    with read_only(d) as db:
        columns = text_columns(db)
        assert not FILTERED_COLUMNS & ALLOWED_COLUMNS.keys()
        unclassified = columns - FILTERED_COLUMNS - ALLOWED_COLUMNS.keys()
        assert unclassified == set(), (
            "a new column can hold text: filter what goes in "
            "(alpd.domain.secrets.filter.redact) and "
            "add it to FILTERED_COLUMNS, or say in ALLOWED_COLUMNS why it cannot hold a secret"
        )
        assert FILTERED_COLUMNS | ALLOWED_COLUMNS.keys() == columns  # no stale entries
        for table, column in sorted(FILTERED_COLUMNS):
            marked = db.execute(
                f"SELECT count(*) FROM {table} WHERE CAST({column} AS TEXT) LIKE '%[REDACTED:%'"
            ).fetchone()[0]
            assert marked, f"{table}.{column} never received a secret in the scenario"


def test_the_stored_output_tail_keeps_the_end_of_the_output_not_the_key(
    d: DaemonProcess,
) -> None:
    with read_only(d) as db:
        tails = [r[0] for r in db.execute("SELECT output_tail FROM executions") if r[0]]
    (tail,) = [t for t in tails if "GITHUB_TOKEN" in t]
    assert tail.endswith("export GITHUB_TOKEN=[REDACTED:secret_assignment]\n")
    assert "[REDACTED:private_key]" in tail or "-----END" not in tail


def test_every_file_of_an_execution_directory_is_filtered_or_allowed(d: DaemonProcess) -> None:
    names = {path.name for path in d.home.glob("executions/*/*")}
    assert "session-context.md" in names and "stderr.log" in names
    assert names - FILTERED_FILES - ALLOWED_FILES.keys() == set()
    contexts = [p.read_text() for p in d.home.glob("executions/*/session-context.md")]
    assert any("[REDACTED:" in text for text in contexts)


def test_the_home_is_0700_and_every_file_in_it_0600(d: DaemonProcess) -> None:
    # After runs of both kinds: execution directories, logs, exit status, session contexts,
    # the database and its WAL, the lock.
    modes = {
        str(path.relative_to(d.home)): stat.S_IMODE(path.lstat().st_mode)
        for path in [d.home, *d.home.rglob("*")]
    }
    assert {"executions", "alp.db", "alpd.lock"} <= modes.keys()
    assert any(name.endswith("/exit-status") for name in modes)
    wrong = {
        name: f"{mode:04o}"
        for name, mode in modes.items()
        if mode != (0o700 if (d.home / name).is_dir() else 0o600)
        # git keeps the objects of the file checkpoints' shadow repositories read-only
        and not (_GIT_OBJECT.fullmatch(name) and mode == 0o400)
    }
    assert wrong == {}
    assert any(name.startswith("checkpoints/") for name in modes)  # the scenario made some


#: a loose object or pack of a shadow repository (docs/checkpoints.md)
_GIT_OBJECT = re.compile(r"checkpoints/[^/]+\.git/objects/(?:[0-9a-f]{2}/[0-9a-f]{38}|pack/.+)")


def test_a_thread_bundle_holds_no_secret(
    d: DaemonProcess, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every thread of the scenario exported (issue 24, point 8): a bundle holds what the
    store holds, so none of the secrets, in its text or in its base64-carried bytes."""
    import base64
    import gzip

    out = tmp_path_factory.mktemp("bundles")
    threads = d.call("thread/list", {"all": True})
    assert isinstance(threads, dict) and len(threads["threads"]) >= 2
    for thread in threads["threads"]:
        bundle = out / f"{thread['id']}.alp.gz"
        done = d.cli("thread", "export", thread["id"], "-o", str(bundle))
        assert done.returncode == 0, done.stderr
        text = gzip.decompress(bundle.read_bytes())
        blobs = b"".join(
            base64.b64decode(value["$b64"])
            for line in text.splitlines()[1:-1]
            for value in json.loads(line)["row"].values()
            if isinstance(value, dict)
        )
        leaks = [s[:12] for s in SECRETS if s.encode() in text or s.encode() in blobs]
        assert leaks == [], thread["id"]
