"""Checkpoints stay small by days and by bytes (issue 27, point 3; docs/checkpoints.md), on a
real alpd and its real shadow repository: steps older than `keep_days` lose their refs and
`git gc` takes their objects (the repository shrinks on disk); past `max_bytes` the oldest
steps go until the repository fits, the newest always staying; `alp ps` shows the size."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

from daemons import StartAlpd
from test_file_checkpoints import call, new_thread, run_root, seed

BLOB = "head -c 300000 /dev/urandom > blob.bin"


def shadow_git(shadow: Path, *args: str, env: dict[str, str] | None = None) -> str:
    return subprocess.run(
        ["git", "--git-dir", str(shadow), *args],
        check=True, capture_output=True, text=True, env={**os.environ, **(env or {})},
    ).stdout  # fmt: skip


def steps(shadow: Path, thread_id: str) -> list[str]:
    refs = shadow_git(shadow, "for-each-ref", "--format=%(refname)").split()
    prefix = f"refs/alp/{thread_id}/"
    return sorted({r[len(prefix) :].rsplit("/", 1)[0] for r in refs if r.startswith(prefix)})


def size(shadow: Path) -> int:
    return sum(p.stat().st_size for p in shadow.rglob("*") if p.is_file())


def age(shadow: Path, ref: str, days: int) -> None:
    """The step's checkpoint as if taken `days` ago: the same tree and note, committed at
    that date (retention reads a step's time from its commit)."""
    commit = shadow_git(shadow, "rev-parse", ref).strip()
    tree = shadow_git(shadow, "rev-parse", f"{commit}^{{tree}}").strip()
    message = shadow_git(shadow, "cat-file", "commit", commit).split("\n\n", 1)[1]
    when = f"{int(time.time()) - days * 86_400} +0000"
    old = subprocess.run(
        ["git", "--git-dir", str(shadow), "commit-tree", tree], input=message, check=True,
        capture_output=True, text=True,
        env={**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when,
             "GIT_COMMITTER_NAME": "alp", "GIT_COMMITTER_EMAIL": "alp@localhost",
             "GIT_AUTHOR_NAME": "alp", "GIT_AUTHOR_EMAIL": "alp@localhost"},
    ).stdout.strip()  # fmt: skip
    shadow_git(shadow, "update-ref", ref, old)


def test_steps_older_than_keep_days_go_and_the_repository_shrinks(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    d = start_alpd('[checkpoints]\nkeep_roots = 50\nkeep_days = 7\nmax_file_bytes = "1MB"\n')
    work = tmp_path / "days"
    seed(work)
    thread_id = new_thread(d, work)
    for _ in range(4):
        run_root(d, thread_id, BLOB, work)
    shadow = next((d.home / "checkpoints").glob("days-*.git"))
    assert steps(shadow, thread_id) == ["1", "2", "3", "4"]
    # roots 1 and 2 as if they ran 10 days ago, root 3 six days ago
    for step, days in (("1", 10), ("2", 10), ("3", 6)):
        for phase in ("pre", "post"):
            age(shadow, f"refs/alp/{thread_id}/{step}/{phase}", days)
    before = size(shadow)
    call(d, "daemon/sweep", {})
    assert steps(shadow, thread_id) == ["3", "4"]
    after = size(shadow)
    # blob version 1 (300 KB of random bytes; root 3's pre still holds version 2) is gone
    assert after < before - 250_000, (before, after)
    assert 600_000 < after < 1_100_000  # versions 2 (root 3's pre), 3 and 4 remain
    assert call(d, "thread/diff", {"threadId": thread_id, "root": 3})["files"]
    ps = json.loads(d.cli("ps", "--json").stdout)["checkpoints"]
    assert ps["entries"] == 2 and ps["bytes"] < before  # its own measure (disk blocks)


def test_past_max_bytes_the_oldest_steps_go_until_it_fits(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    d = start_alpd('[checkpoints]\nkeep_roots = 50\nmax_bytes = "700KB"\nmax_file_bytes = "1MB"\n')
    work = tmp_path / "bytes"
    seed(work)
    thread_id = new_thread(d, work)
    sizes = []
    for _ in range(5):
        run_root(d, thread_id, BLOB, work)  # each followed by daemon/sweep: the gc pass
        sizes.append(size(next((d.home / "checkpoints").glob("bytes-*.git"))))
    shadow = next((d.home / "checkpoints").glob("bytes-*.git"))
    kept = steps(shadow, thread_id)
    assert "5" in kept and "1" not in kept and len(kept) < 5, kept
    cap = 700 * 1024
    assert all(s <= cap for s in sizes), sizes  # after every pass the repository fits
    ps = json.loads(d.cli("ps", "--json").stdout)["checkpoints"]
    assert ps["maxBytes"] == cap and ps["bytes"] <= cap and ps["entries"] == len(kept)
    # the newest step is whole: its diff and an undo of it work
    assert call(d, "thread/diff", {"threadId": thread_id})["files"][0]["path"] == "blob.bin"
