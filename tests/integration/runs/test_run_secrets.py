"""What alpd keeps of how a headless run was started holds no verbatim secret (issue 21,
points 11 and 12), while the run itself still gets every byte it was given.

* A root's prompt reaches a `command` run on its standard input (and in `$ALP_PROMPT`); it is
  never written under `$ALP_HOME` as given — only its filtered text is kept. The run reads it
  whole even when alpd is killed right after the spawn.
* A policy's `args` are stored filtered, with a digest of the verbatim argv inside the
  policyHash (policy version 3): the token on a command line is in no file and no column of
  the home, the run gets it verbatim, and an edit of the stored args or of the digest is
  EXECUTION_POLICY_TAMPERED.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pytest
import rfc8785
from daemons import StartAlpd, settled
from polling import wait_for

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "unit" / "secrets"))
from secrets_corpus import corpus

SAMPLES = corpus(1)
#: one sample of every kind of the corpus, each under a heading (about 40 KB)
PROMPT = "\n\n".join(f"## {sample.kind}\n{sample.text}" for sample in SAMPLES)
#: the secrets that stand in the prompt as they are (some kinds hide theirs: base64, `\`)
CORPUS_SECRETS = {s for sample in SAMPLES for s in sample.secrets if s in sample.text}
TOKEN = "ghp_" + "Rk4vN8xQ2wM6pT0yL3sH7jD1fB5cG9aZ4eU8"
PASSWORD = "Vt7#qL2!xN9pRm5w"


def leaks(home: Path, secrets: set[str]) -> list[tuple[str, str]]:
    """(where, secret's start) of every secret found in a file under `home` (the database
    and its WAL included, as bytes) or in any column of any table of its database."""
    found = [
        (str(path.relative_to(home)), secret[:12])
        for path in home.rglob("*")
        if path.is_file()
        for secret in secrets
        if secret.encode() in path.read_bytes()
    ]
    # Bytes can miss a text split across SQLite overflow pages: read every column too.
    db = sqlite3.connect(f"file:{home / 'alp.db'}?mode=ro", uri=True)
    try:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            columns = [r[1] for r in db.execute(f"PRAGMA table_info('{table}')")]
            for column in columns:
                for (value,) in db.execute(f'SELECT CAST("{column}" AS BLOB) FROM "{table}"'):
                    if value is None:
                        continue
                    data = bytes(value) if not isinstance(value, int | float) else b""
                    found += [(f"{table}.{column}", s[:12]) for s in secrets if s.encode() in data]
    finally:
        db.close()
    return found


def new_thread(d: DaemonProcess, work: Path) -> str:
    thread = d.call("thread/create", {"title": "secrets", "cwd": str(work)})
    assert isinstance(thread, dict)
    return str(thread["id"])


def continue_headless(
    d: DaemonProcess, thread_id: str, work: Path, args: list[str], prompt: str | None = None
) -> dict[str, Any]:
    params: dict[str, object] = {
        "threadId": thread_id, "runtime": "command", "headless": True, "cwd": str(work),
        "args": args,
    }  # fmt: skip
    if prompt is not None:
        params["prompt"] = prompt
    started = d.call("thread/continue", params)
    assert isinstance(started, dict)
    return dict(started["execution"])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Where the runs write what they received: beside the home, never in it."""
    path = tmp_path / "outside"
    path.mkdir()
    return path


# -- point 11: the prompt --------------------------------------------------------------------


def test_a_headless_prompt_reaches_the_run_whole_and_only_its_filtered_text_is_stored(
    d: DaemonProcess, work: Path, outside: Path
) -> None:
    assert len({s.kind for s in SAMPLES if set(s.secrets) & CORPUS_SECRETS}) > 150
    script = f'cat > "{outside}/stdin"; printf %s "$ALP_PROMPT" > "{outside}/env"'
    root = continue_headless(d, new_thread(d, work), work, ["sh", "-c", script], PROMPT)
    assert settled(d, root["id"])["outcome"] == "completed"
    # The run got every byte, on stdin and in its environment …
    assert (outside / "stdin").read_text() == PROMPT
    assert (outside / "env").read_text() == PROMPT
    # … and the home keeps none of the secrets, in no file and no column …
    assert leaks(d.home, CORPUS_SECRETS) == []
    # … only the prompt's filtered text, as the record of what the run was asked.
    kept = (d.home / "executions" / root["id"] / "prompt").read_text()
    assert kept.count("[REDACTED:") >= len(SAMPLES)
    assert kept.startswith(f"## {SAMPLES[0].kind}\n")


def test_a_headless_run_reads_its_whole_prompt_though_alpd_died_after_starting_it(
    d: DaemonProcess, work: Path, outside: Path
) -> None:
    # Over 64 KiB, what a pipe holds by default: the run must not need alpd to write it.
    # (Under 128 KiB: `$ALP_PROMPT` holds it too, and Linux caps one variable there.)
    prompt = (PROMPT + "\n") * 2
    assert 65536 < len(prompt.encode()) < 131072
    script = (
        f'touch "{outside}/ready"; while [ ! -e "{outside}/go" ]; do sleep 0.05; done; '
        f'cat > "{outside}/stdin"'
    )
    root = continue_headless(d, new_thread(d, work), work, ["sh", "-c", script], prompt)
    wait_for((outside / "ready").exists, what="the run to start")
    d.kill9()
    (outside / "go").touch()
    d.start()
    assert settled(d, root["id"])["outcome"] == "completed"
    assert (outside / "stdin").read_text() == prompt
    assert leaks(d.home, CORPUS_SECRETS) == []


# -- point 12: the policy's args -------------------------------------------------------------


def test_a_token_on_the_command_line_is_stored_filtered_and_the_run_gets_it_verbatim(
    d: DaemonProcess, work: Path, outside: Path
) -> None:
    script = f'export DB_PASSWORD={PASSWORD}; printf "%s\\n" "$@" > "{outside}/argv"'
    args = ["sh", "-c", script, "sh", "--token", TOKEN]
    root = continue_headless(d, new_thread(d, work), work, args)
    assert settled(d, root["id"])["outcome"] == "completed"
    # The run got its arguments as given …
    assert (outside / "argv").read_text() == f"--token\n{TOKEN}\n"
    # … the home holds neither secret …
    assert leaks(d.home, {TOKEN, PASSWORD}) == []
    # … and the policy shows where they were, with the digest of what ran.
    shown = d.call("execution/show", {"executionId": root["id"]})
    assert isinstance(shown, dict)
    policy = shown["policy"]
    assert policy["version"] == 4
    assert policy["args"][:2] == ["sh", "-c"] and policy["args"][3:5] == ["sh", "--token"]
    assert "[REDACTED:" in policy["args"][2] and "[REDACTED:" in policy["args"][5]
    verbatim = "sha256:" + hashlib.sha256(rfc8785.dumps(args)).hexdigest()
    assert policy["argsDigest"] == verbatim


def _edit_policy(d: DaemonProcess, execution_id: str, field: str) -> None:
    """As an attacker with the user's file access: edit the stored policy's `field`, the
    policyHash left alone."""
    conn = sqlite3.connect(d.home / "alp.db", timeout=10, isolation_level=None)
    try:
        conn.execute("DROP TRIGGER IF EXISTS executions_policy_immutable")
        (stored,) = conn.execute(
            "SELECT policy FROM executions WHERE id = ?", (execution_id,)
        ).fetchone()
        document = json.loads(stored)
        if field == "args":
            document["args"] = [*document["args"][:-1], "harmless"]
        else:
            document["argsDigest"] = "sha256:" + "0" * 64
        conn.execute(
            "UPDATE executions SET policy = ? WHERE id = ?",
            (rfc8785.dumps(document), execution_id),
        )
    finally:
        conn.close()


@pytest.mark.parametrize("field", ["args", "argsDigest"])
def test_an_edit_of_the_stored_filtered_args_or_their_digest_is_tampered(
    start_alpd: StartAlpd, work: Path, field: str
) -> None:
    dd = start_alpd()
    root = continue_headless(dd, new_thread(dd, work), work, ["echo", "--token", TOKEN])
    settled(dd, root["id"])
    _edit_policy(dd, root["id"], field)
    with pytest.raises(RpcError) as info:
        dd.call("execution/show", {"executionId": root["id"]})
    assert info.value.name == "EXECUTION_POLICY_TAMPERED"
    assert info.value.data["executionId"] == root["id"]
