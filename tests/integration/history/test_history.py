"""History copy against a real alpd: fixtures import complete with exact counts, corruption
and torn writes, idempotence, live runs, thread sync, kill -9 mid-sync, no secret stored."""

from __future__ import annotations

import contextlib
import json
import shutil
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from polling import wait_for
from transcripts import (
    CLAUDE_COUNTS,
    CODEX_COUNTS,
    FIXTURES,
    Claude,
    Codex,
    db,
    entry_counts,
    write_db,
)

from alpctl.client import Client, DaemonUnreachable, RpcError
from alpd.store.history.entries import DIGESTED_COLUMNS, entry_content, entry_digest
from alpd.testing.daemon import DaemonProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "secrets"))
from secrets_corpus import corpus


def import_dir(d: DaemonProcess, runtime: str, path: Path) -> dict[str, Any]:
    result = d.call("history/import", {"runtime": runtime, "path": str(path)})
    assert isinstance(result, dict)
    return result


def copy_fixtures(tmp_path: Path, runtime: str) -> Path:
    target = tmp_path / f"{runtime}-sessions"
    shutil.copytree(FIXTURES / runtime, target)
    for path in target.iterdir():
        path.chmod(0o644)
    return target


def test_every_fixture_imports_complete_with_exact_entry_counts(alpd: DaemonProcess) -> None:
    claude = import_dir(alpd, "claude", FIXTURES / "claude")
    codex = import_dir(alpd, "codex", FIXTURES / "codex")
    assert (claude["files"], claude["imported"], claude["added"]) == (9, 9, 46)
    assert (codex["files"], codex["imported"], codex["added"]) == (6, 6, 22)
    counts = entry_counts(alpd.home)
    for session, expected in {**CLAUDE_COUNTS, **CODEX_COUNTS}.items():
        assert counts[session] == (expected, "complete", 0), session
    with db(alpd.home) as conn:
        legacy = conn.execute(
            "SELECT thread_id, is_root, root_id = id AS own_root, status, kind, origin "
            "FROM executions"
        ).fetchall()
        # The Claude fork copied 7 entries of its parent: whichever file is read second keeps
        # them as pointers to the first's rows, so they are indexed once.
        copies = conn.execute(
            "SELECT count(*) FROM history_entries WHERE copy_of IS NOT NULL"
        ).fetchone()[0]
        indexed = conn.execute("SELECT count(*) FROM search_words_docsize").fetchone()[0]
    assert all(r["thread_id"] is None and r["is_root"] == 1 and r["own_root"] for r in legacy)
    assert {(r["status"], r["kind"], json.loads(r["origin"])["door"]) for r in legacy} == {
        ("settled", "interactive", "import")
    }
    assert copies == 7
    assert indexed == 46 + 22 - 7


def test_reimport_is_idempotent(alpd: DaemonProcess) -> None:
    import_dir(alpd, "claude", FIXTURES / "claude")
    before = entry_counts(alpd.home)
    again = import_dir(alpd, "claude", FIXTURES / "claude")
    assert (again["imported"], again["updated"], again["added"]) == (0, 9, 0)
    assert entry_counts(alpd.home) == before


def test_corrupt_line_gives_partial_with_one_skipped(alpd: DaemonProcess, tmp_path: Path) -> None:
    sessions = copy_fixtures(tmp_path, "claude")
    session = "5c8d6878-df77-4e19-930e-dfb3c1a2404b"
    path = sessions / f"{session}.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    prompt_at = next(i for i, raw in enumerate(lines) if b'"type":"user"' in raw)
    lines[prompt_at] = b'{"type":"user", this is not json\n'
    path.write_bytes(b"".join(lines))
    import_dir(alpd, "claude", sessions)
    assert entry_counts(alpd.home)[session] == (4, "partial", 1)
    with db(alpd.home) as conn:
        execution_id = conn.execute(
            "SELECT id FROM executions WHERE native_session_id = ?", (session,)
        ).fetchone()[0]
    shown = alpd.call("execution/show", {"executionId": execution_id})
    assert isinstance(shown, dict)
    assert (shown["historyLevel"], shown["historySkipped"]) == ("partial", 1)


def test_truncated_last_line_is_an_unfinished_write_not_data(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    sessions = tmp_path / "torn"
    sessions.mkdir()
    claude = Claude()
    first, second = claude.prompt("first words"), claude.reply("second words")
    path = sessions / f"{claude.session}.jsonl"
    path.write_bytes(first + second[:40])
    import_dir(alpd, "claude", sessions)
    assert entry_counts(alpd.home)[claude.session] == (1, "complete", 0)
    with path.open("ab") as f:
        f.write(second[40:])
    again = import_dir(alpd, "claude", sessions)
    assert again["added"] == 1
    assert entry_counts(alpd.home)[claude.session] == (2, "complete", 0)


def start_running_root(d: DaemonProcess, work: Path) -> tuple[str, str]:
    thread = d.call("thread/create", {"title": "live run", "cwd": str(work)})
    assert isinstance(thread, dict)
    started = d.call(
        "thread/continue",
        {
            "threadId": thread["id"],
            "runtime": "command",
            "headless": True,
            "args": ["sleep", "60"],
            "cwd": str(work),
        },
    )
    assert isinstance(started, dict)
    return thread["id"], started["execution"]["id"]


def root_entries(d: DaemonProcess, thread_id: str, execution_id: str) -> int:
    shown = d.call("thread/show", {"threadId": thread_id})
    assert isinstance(shown, dict)
    roots = {r["executionId"]: r for r in shown["history"]["byRoot"]}
    return int(roots[execution_id].get("entries", 0))


def test_live_transcript_entries_appear_before_settle(alpd: DaemonProcess, tmp_path: Path) -> None:
    thread_id, execution_id = start_running_root(alpd, tmp_path)
    claude = Claude()
    transcript = tmp_path / "live.jsonl"
    transcript.write_bytes(claude.prompt("live prompt about kangaroos"))
    with write_db(alpd.home) as conn:
        conn.execute(
            "UPDATE executions SET transcript_path = ? WHERE id = ?",
            (str(transcript), execution_id),
        )
    wait_for(lambda: root_entries(alpd, thread_id, execution_id) == 1, what="first entry")
    with transcript.open("ab") as f:
        f.write(claude.reply("kangaroos hop"))
    wait_for(lambda: root_entries(alpd, thread_id, execution_id) == 2, what="second entry")
    execution = alpd.call("execution/show", {"executionId": execution_id})
    assert isinstance(execution, dict)
    assert execution["status"] == "running"
    found = alpd.call("history/search", {"query": "kangaroos"})
    assert isinstance(found, dict)
    assert {h["executionId"] for h in found["hits"]} == {execution_id}
    assert {h["sequence"] for h in found["hits"]} == {1}
    alpd.call("execution/cancel", {"executionId": execution_id})


def test_command_root_without_transcript_is_unsupported(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    thread_id, execution_id = start_running_root(alpd, tmp_path)
    alpd.call("execution/cancel", {"executionId": execution_id})
    wait_for(lambda: entry_counts(alpd.home)[None][1] == "unsupported", what="unsupported level")
    synced = alpd.call("thread/sync", {"threadId": thread_id})
    assert isinstance(synced, dict)
    assert synced["level"] == "unsupported"


def test_thread_sync_is_idempotent_and_counts_entries(alpd: DaemonProcess, tmp_path: Path) -> None:
    thread_id, execution_id = start_running_root(alpd, tmp_path)
    alpd.call("execution/cancel", {"executionId": execution_id})
    transcript = tmp_path / "settled.jsonl"
    shutil.copy(FIXTURES / "claude" / "5c8d6878-df77-4e19-930e-dfb3c1a2404b.jsonl", transcript)
    with write_db(alpd.home) as conn:
        conn.execute(
            "UPDATE executions SET transcript_path = ?, history_level = NULL WHERE id = ?",
            (str(transcript), execution_id),
        )
    first = alpd.call("thread/sync", {"threadId": thread_id})
    second = alpd.call("thread/sync", {"threadId": thread_id})
    assert isinstance(first, dict) and isinstance(second, dict)
    assert (first["level"], first["entries"]) == ("complete", 5)
    assert first["added"] in (0, 5)  # the background worker may have copied it first
    assert (second["added"], second["entries"]) == (0, 5)
    shown = alpd.call("thread/show", {"threadId": thread_id})
    assert isinstance(shown, dict)
    assert (shown["history"]["level"], shown["history"]["entries"]) == ("complete", 5)
    done = alpd.cli("thread", "sync", thread_id)
    assert done.returncode == 0, done.stderr
    assert "history complete, 5 entries (0 added)" in done.stdout


def test_root_resuming_an_imported_session_is_linked(alpd: DaemonProcess, tmp_path: Path) -> None:
    sessions = tmp_path / "old"
    sessions.mkdir()
    claude = Claude()
    path = sessions / f"{claude.session}.jsonl"
    path.write_bytes(claude.prompt("before alp") + claude.reply("old answer"))
    import_dir(alpd, "claude", sessions)
    thread_id, execution_id = start_running_root(alpd, tmp_path)
    with write_db(alpd.home) as conn:
        legacy = conn.execute(
            "SELECT id FROM executions WHERE native_session_id = ?", (claude.session,)
        ).fetchone()[0]
        conn.execute(
            "UPDATE executions SET native_session_id = ?, transcript_path = ? WHERE id = ?",
            (claude.session, str(path), execution_id),
        )
    with path.open("ab") as f:
        f.write(claude.prompt("resumed under alp") + claude.reply("new answer"))
    alpd.call("execution/cancel", {"executionId": execution_id})
    synced = alpd.call("thread/sync", {"threadId": thread_id})
    assert isinstance(synced, dict)
    (root,) = synced["roots"]
    assert (root["linksTo"], root["linkKind"]) == (legacy, "resume")
    # The resumed root holds only what it added; the imported copy keeps the rest.
    assert root["entries"] == 2
    assert entry_counts(alpd.home)[claude.session][0] in (2,)
    shown = alpd.cli("thread", "show", thread_id)
    assert f"resume of {legacy}" in shown.stdout


def big_session(directory: Path, entries: int) -> tuple[Path, set[str]]:
    claude = Claude()
    path = directory / f"{claude.session}.jsonl"
    text = "lorem ipsum dolor sit amet " * 40
    with path.open("wb") as f:
        for i in range(entries // 2):
            f.write(claude.prompt(f"prompt {i} {text}"))
            f.write(claude.reply(f"reply {i} {text}"))
    ids = {json.loads(raw)["uuid"] for raw in path.read_bytes().splitlines()}
    return path, ids


def test_kill9_mid_import_then_restart_leaves_no_duplicates_and_no_gaps(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    sessions = tmp_path / "big"
    sessions.mkdir()
    path, ids = big_session(sessions, 60_000)
    session = path.stem

    def run_import() -> None:
        with contextlib.suppress(DaemonUnreachable, OSError):
            import_dir(alpd, "claude", sessions)

    importer = threading.Thread(target=run_import, daemon=True)
    importer.start()

    def copied() -> int:
        return entry_counts(alpd.home).get(session, (0, None, 0))[0]

    wait_for(lambda: copied() > 0, what="a first committed chunk")
    alpd.kill9()
    importer.join(10)
    partial = copied()
    assert 0 < partial < len(ids), "the import finished before the kill; make it bigger"
    alpd.start()
    # The execution's first sync never finished (level NULL): the worker resumes it.
    wait_for(lambda: entry_counts(alpd.home)[session][1] == "complete", timeout=60)
    with db(alpd.home) as conn:
        stored = [r[0] for r in conn.execute("SELECT native_id FROM history_entries")]
        cursor = conn.execute("SELECT consumed FROM history_cursors").fetchone()[0]
    assert len(stored) == len(set(stored)) == len(ids)
    assert set(stored) == ids
    assert cursor == path.stat().st_size


def secret_transcripts(directory: Path) -> list[bytes]:
    """Claude and Codex sessions with every corpus secret in a prompt, a reply, a tool input
    and a tool output (at its end, past the 2 KB tail cut too)."""
    secrets: list[bytes] = []
    claude, codex = Claude(), Codex()
    claude_lines, codex_lines = [], [codex.meta()]
    for n, sample in enumerate(corpus()):
        secrets += [s.encode() for s in sample.secrets]
        long_output = "x" * 3000 + "\n" + sample.text
        claude_lines += [
            claude.prompt(f"here is my config: {sample.text}"),
            claude.reply(f"I see {sample.text}"),
            claude.tool_call("Bash", {"command": sample.text}, f"toolu_{n}"),
            claude.tool_result(long_output, f"toolu_{n}"),
            claude.tool_result(sample.text + "\n" + "y" * 3000, f"toolu_b{n}"),
        ]
        codex_lines += [
            codex.prompt(sample.text),
            codex.reply(sample.text),
            codex.tool_call({"cmd": sample.text}, f"call_{n}"),
            codex.tool_result(long_output, f"call_{n}"),
        ]
    (directory / "claude").mkdir()
    (directory / "claude" / f"{claude.session}.jsonl").write_bytes(b"".join(claude_lines))
    codex.path_in(directory / "codex").write_bytes(b"".join(codex_lines))
    return secrets


def files_holding(root: Path, secrets: list[bytes]) -> list[tuple[str, str]]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            found += [(str(path), s.decode()[:12]) for s in secrets if s in data]
    return found


def test_no_secret_of_the_corpus_is_stored_anywhere_in_the_home(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    sources = tmp_path / "sources"
    sources.mkdir()
    secrets = secret_transcripts(sources)
    assert files_holding(sources, secrets)  # the check can see them
    claude = import_dir(alpd, "claude", sources / "claude")
    codex = import_dir(alpd, "codex", sources / "codex")
    assert claude["added"] and codex["added"]
    hits = alpd.call("history/search", {"query": "config", "limit": 5})
    assert isinstance(hits, dict) and hits["hits"]
    # While running (database + WAL), then after a clean stop (checkpointed).
    assert files_holding(alpd.home, secrets) == []
    assert not [s for s in secrets if s in alpd.log_path.read_bytes()]
    alpd.stop()
    assert files_holding(alpd.home, secrets) == []
    alpd.start()


def test_import_cli_prints_progress_and_a_summary(alpd: DaemonProcess) -> None:
    done = alpd.cli("import", "codex", "--path", str(FIXTURES / "codex"))
    assert done.returncode == 0, done.stderr
    assert "imported 6 new codex sessions" in done.stdout
    assert "import: 6/6 files" in done.stderr
    as_json = alpd.cli("import", "codex", "--path", str(FIXTURES / "codex"), "--json")
    assert json.loads(as_json.stdout)["updated"] == 6


def test_import_lists_each_session_with_its_file_entries_and_completeness(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    sessions = copy_fixtures(tmp_path, "claude")
    broken = "5c8d6878-df77-4e19-930e-dfb3c1a2404b"
    path = sessions / f"{broken}.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    prompt_at = next(i for i, raw in enumerate(lines) if b'"type":"user"' in raw)
    lines[prompt_at] = b'{"type":"user", this is not json\n'
    path.write_bytes(b"".join(lines))
    done = alpd.cli("import", "claude", "--path", str(sessions), "--json")
    assert done.returncode == 0, done.stderr
    listed = {s["nativeSessionId"]: s for s in json.loads(done.stdout)["sessions"]}
    assert set(listed) == set(CLAUDE_COUNTS)
    for session, expected in CLAUDE_COUNTS.items():
        if session != broken:
            row = listed[session]
            assert (row["status"], row["entries"], row["level"], row["skipped"]) == (
                "imported",
                expected,
                "complete",
                0,
            ), session
    assert (listed[broken]["level"], listed[broken]["skipped"]) == ("partial", 1)
    assert listed[broken]["path"] == str(path)
    table = alpd.cli("import", "claude", "--path", str(sessions)).stdout.splitlines()
    assert table[0].split() == ["SESSION", "STATUS", "ENTRIES", "ADDED", "LEVEL", "FILE"]
    broken_row = next(line for line in table if line.startswith(broken))
    assert "updated" in broken_row and "partial (1 skipped)" in broken_row
    assert broken_row.endswith(f"{broken}.jsonl")


def test_import_of_a_missing_directory_is_a_domain_error(alpd: DaemonProcess) -> None:
    with Client.connect(alpd.socket_path) as client, pytest.raises(Exception) as caught:
        client.call("history/import", {"runtime": "claude", "path": "/nonexistent/dir"})
    assert getattr(caught.value, "name", "") == "INVALID_ARGUMENT"


def test_every_entry_has_a_digest_checked_when_search_reads_it_back(
    alpd: DaemonProcess, tmp_path: Path
) -> None:
    sessions = tmp_path / "digests"
    sessions.mkdir()
    claude = Claude()
    path = sessions / f"{claude.session}.jsonl"
    path.write_bytes(claude.prompt("wombats dig burrows") + claude.reply("wombats are fine"))
    import_dir(alpd, "claude", sessions)
    with db(alpd.home) as conn:
        rows = [
            {"id": r["id"], "digest": r["digest"], "content": entry_content(list(r)[2:])}
            for r in conn.execute(
                f"SELECT id, digest, {', '.join(DIGESTED_COLUMNS)} FROM history_entries"
            )
        ]
    assert len(rows) == 2
    assert all(r["digest"] == entry_digest(r["content"]) for r in rows)
    found = alpd.call("history/search", {"query": "wombats"})
    assert isinstance(found, dict) and len(found["hits"]) == 2

    # Edited in place (the immutability trigger dropped): the text no longer matches.
    with write_db(alpd.home) as conn:
        conn.execute("DROP TRIGGER history_entries_immutable")
        conn.execute(
            "UPDATE history_entries SET text = replace(text, 'burrows', 'tunnels') "
            "WHERE text LIKE '%burrows%'"
        )
    with pytest.raises(RpcError) as info:
        alpd.call("history/search", {"query": "wombats"})
    assert info.value.name == "HISTORY_ENTRY_TAMPERED"
    tampered = rows[0]["id"] if b"burrows" in rows[0]["content"] else rows[1]["id"]
    assert info.value.data["entryId"] == tampered

    # Its digest cleared as well, to pass for an entry from before digests: still refused.
    with write_db(alpd.home) as conn:
        conn.execute("UPDATE history_entries SET digest = NULL WHERE id = ?", (tampered,))
    with pytest.raises(RpcError) as info:
        alpd.call("history/search", {"query": "wombats"})
    assert info.value.name == "HISTORY_ENTRY_TAMPERED"
