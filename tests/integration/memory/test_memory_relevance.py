"""Relevance over every match, not the newest ones (docs/memory.md, "Who reads"): among 10,000
active memories of a workspace, an old one that holds the words of the thread's objective and
pins reaches a new root ahead of thousands of newer memories sharing a single word with the
thread; on both stores.

The memories are written through alpd's own store layer (`alpd.store.memory.write_version`,
the versions of `alpd.domain.memory.record`, digest-chained) between two starts of a real
alpd: 10,000 `memory/add` calls over the socket would take a minute.
"""

from __future__ import annotations

import json
import os
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import pytest
from store_access import raw_db

from alpd.domain.memory.record import Provenance, first_version, version_digest
from alpd.store import memory as memories
from alpd.store.db import Tx, open_store
from alpd.testing.daemon import DaemonProcess, running_daemon

pytestmark = pytest.mark.both_stores

HEADING = "# memory — work state, not authority"
MEMORIES = 10_000
STRONG = "invoice totals are rounded per line in cents before the tax is added"
START = datetime(2024, 1, 1, tzinfo=UTC)
FILLER = "alpha bravo delta echo foxtrot golf hotel india juliet kilo lima mike oscar papa"


def memory_id(number: int) -> str:
    return f"mem_{number:026d}"


def at(number: int) -> str:
    """Older first: memory 0 was confirmed on 2024-01-01, one more each hour after it."""
    return (START + timedelta(hours=number)).isoformat()


def texts() -> list[str]:
    """Memory 0 is the strong match; a third of the newer ones share one word with the thread
    (`invoice`), the rest none."""
    rng = random.Random(5)
    filler = FILLER.split()
    out = [STRONG]
    for number in range(1, MEMORIES):
        words = rng.sample(filler, 10)
        if number % 3 == 0:
            words[rng.randrange(10)] = "invoice"
        out.append(f"{' '.join(words)} {number}")
    return out


async def fill(home: Path, url: str | None, workspace: Path) -> None:
    uid = os.getuid()
    versions = [
        first_version(
            memory_id=memory_id(number),
            owner_uid=uid,
            kind="fact",
            scope="workspace",
            workspace=str(workspace),
            text=text,
            provenance=Provenance(by=f"uid:{uid}", door="cli"),
            at=at(number),
        )
        for number, text in enumerate(texts())
    ]

    async def unit(tx: Tx) -> None:
        for version in versions:
            await memories.write_version(tx, version, version_digest(version))

    store = await open_store(home, url)
    try:
        await store.write(unit)
    finally:
        await store.close()


def session_context(d: DaemonProcess, thread_id: str, cwd: Path, script: str) -> str:
    """What a new root is given; it runs `script` after copying it."""
    seen = cwd / "seen.md"
    done = d.cli(
        "thread", "continue", thread_id, "--json", "--runtime", "command", "--headless",
        "--wait", "--", "sh", "-c", f'cat "$ALP_SESSION_CONTEXT" > {seen}; {script}',
        cwd=str(cwd),
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout, done.stderr)
    return seen.read_text()


def test_an_old_memory_matching_the_thread_wins_over_ten_thousand_newer_ones(
    tmp_path: Path, store_url: str | None
) -> None:
    ws = tmp_path / "shop"
    (ws / ".git").mkdir(parents=True)
    env = {"ALP_STORE_URL": store_url} if store_url else {}
    with running_daemon(tmp_path, extra_env=env) as d:
        home = d.home
    anyio.run(fill, home, store_url, ws)
    with running_daemon(tmp_path, extra_env=env) as d:
        listed = d.call("memory/list", {"cwd": str(ws), "limit": 1})
        assert isinstance(listed, dict) and listed["memories"]
        created = d.call("thread/create", {"title": "invoice totals", "cwd": str(ws)})
        assert isinstance(created, dict)
        thread = str(created["id"])
        pins = (
            "alp context pin objective -- 'show invoice totals rounded per line' && "
            "alp context pin constraint -- 'amounts are kept in cents before tax'"
        )
        session_context(d, thread, ws, pins)
        text = session_context(d, thread, ws, "true")
        assert HEADING in text
        section = text[text.index(HEADING) :]
        lines = [line for line in section.splitlines() if line.startswith("- ")]
        # the strong match comes first, ahead of every newer weak one, within the cap
        assert STRONG in lines[0] and memory_id(0) in lines[0], lines[:3]
        assert len(section.encode()) <= 2048 + 1
        with raw_db(d) as conn:
            given = conn.execute(
                "SELECT versions FROM root_memories ORDER BY execution_id DESC"
            ).fetchone()
        assert json.loads(given[0])[0] == [memory_id(0), 1]
