"""Checkpoints stay small (issue 27, point 3): past `keep_roots` the oldest steps lose their
refs and `git gc` prunes their objects; `alp ps` shows the size the gc pass measured."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from daemons import StartAlpd
from test_file_checkpoints import call, new_thread, run_root, seed

CONFIG = """
[checkpoints]
keep_roots = 2
max_file_bytes = "1MB"
"""


def refs(shadow: Path) -> list[str]:
    out = subprocess.run(
        ["git", "--git-dir", str(shadow), "for-each-ref", "--format=%(refname)"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(out.split())


def test_only_the_newest_roots_keep_their_checkpoints(
    start_alpd: StartAlpd, tmp_path: Path
) -> None:
    d = start_alpd(CONFIG)
    work = tmp_path / "kept"
    seed(work)
    thread_id = new_thread(d, work)
    for _ in range(4):
        run_root(d, thread_id, "head -c 300000 /dev/urandom > blob.bin", work)
    shadow = next((d.home / "checkpoints").glob("kept-*.git"))
    assert refs(shadow) == [
        f"refs/alp/{thread_id}/{n}/{phase}" for n in (3, 4) for phase in ("post", "pre")
    ]
    # each root wrote a new blob.bin: the kept steps hold versions 2-4, version 1 is pruned
    size = sum(p.stat().st_size for p in shadow.rglob("*") if p.is_file())
    assert 900_000 < size < 1_100_000
    ps = json.loads(d.cli("ps", "--json").stdout)["checkpoints"]
    assert ps["workspaces"] == 1 and ps["entries"] == 2 and ps["keepRoots"] == 2
    assert 900_000 < ps["bytes"] < 1_500_000
    assert (
        call(d, "thread/diff", {"threadId": thread_id, "root": 4})["files"][0]["path"] == "blob.bin"
    )
