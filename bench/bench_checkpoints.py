"""File checkpoints: what one adds to a root's start and end, and how the shadow repository
grows (issue 27: under 300 ms p50 for a 10,000-file workspace with 50 changed files; growth
about the changed bytes, not the workspace).

A git repository of `FILES` files (about 1 KiB each, in 100 directories, committed) is the
workspace. Each round: the `pre` checkpoint, 50 files changed (a line appended) and 2 created,
the `post` checkpoint — `ShadowRepo.snapshot`, what alpd runs before a root's spawn and after
its settle. The floor, measured in the same rounds: `git status --porcelain` on the
workspace (what looking at the same files with git costs). Growth: bytes of the shadow
repository's files (apparent size: loose objects are compressed) after the rounds, against
the bytes changed, loose (as written) and packed (after the `git gc` the gc task runs);
the first checkpoint (which copies the workspace's index and borrows its
objects) is counted in.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

import anyio

from alpd.domain.checkpoints.entries import Note
from alpd.services.checkpoints.shadow import ShadowRepo
from bench import Result

FILES = int(os.environ.get("ALP_BENCH_CHECKPOINT_FILES", "10000"))
CHANGED = 50
ROUNDS = int(os.environ.get("ALP_BENCH_CHECKPOINT_ROUNDS", "15"))
LIMIT = 50 * 1024**2


def _git(work: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    subprocess.run(
        ["git", "-C", str(work), "-c", "user.name=b", "-c", "user.email=b@b", *args],
        env=env,
        check=True,
        capture_output=True,
    )


def make_workspace(work: Path) -> list[Path]:
    files = []
    for n in range(FILES):
        path = work / f"dir{n % 100:03d}" / f"file{n:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {n}\n" + "some text of a source file\n" * 36)
        files.append(path)
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "-m", "start")
    return files


def apparent_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


async def rounds(
    work: Path, home: Path, files: list[Path]
) -> tuple[list[float], list[float], int, int, int]:
    repo = ShadowRepo(home / "checkpoints", str(work))
    ignore = home / "checkpoints" / "ignore"
    snapshots: list[float] = []
    floors: list[float] = []
    changed_bytes = 0
    for r in range(ROUNDS):
        for phase in ("pre", "post"):
            note = Note(
                thread_id="thr_bench", step=str(r + 1), phase=phase, at="", workspace=str(work)
            )  # type: ignore[arg-type]
            started = time.perf_counter()
            async with repo.lock:
                await repo.ensure(ignore)
                await repo.snapshot(note, LIMIT, f"refs/alp/thr_bench/{r + 1}/{phase}")
            snapshots.append(time.perf_counter() - started)
            started = time.perf_counter()
            await anyio.run_process(["git", "-C", str(work), "status", "--porcelain"], check=True)
            floors.append(time.perf_counter() - started)
            if phase == "pre":
                for path in files[r * CHANGED : (r + 1) * CHANGED]:
                    line = f"changed in round {r}\n"
                    with path.open("a") as f:
                        f.write(line)
                    changed_bytes += path.stat().st_size
                for k in range(2):
                    new = work / f"new-{r}-{k}.txt"
                    new.write_text("created by the root\n" * 20)
                    changed_bytes += new.stat().st_size
    loose = apparent_bytes(repo.path)
    async with repo.lock:
        await repo.gc()
    return snapshots, floors, changed_bytes, loose, apparent_bytes(repo.path)


def run() -> list[Result]:
    with tempfile.TemporaryDirectory(prefix="alp-bench-checkpoints-") as tmp:
        work, home = Path(tmp, "work"), Path(tmp, "home")
        work.mkdir()
        home.mkdir()
        files = make_workspace(work)
        workspace_bytes = sum(p.stat().st_size for p in files)
        snapshots, floors, changed, grown, packed = anyio.run(rounds, work, home, files)
    first, rest = snapshots[0], snapshots[1:]
    p50, floor = statistics.median(rest), statistics.median(floors)
    return [
        Result(
            f"checkpoint of {FILES:,} files, {CHANGED} changed (p50 of {len(rest)}; vs git status)",
            p50 * 1000,
            "ms",
            floor * 1000,
            p50 / floor,
            "<= 300 ms",
        ),
        Result(
            "first checkpoint of the workspace (copies its index; vs git status)",
            first * 1000,
            "ms",
            floor * 1000,
            first / floor,
            "",
        ),
        Result(
            f"shadow repository after {ROUNDS} roots, loose (vs bytes they changed; workspace "
            f"{workspace_bytes / 1024**2:.1f} MiB)",
            grown / 1024,
            "KiB",
            changed / 1024,
            grown / changed,
            "",
        ),
        Result(
            "… after the gc task's `git gc` (vs bytes they changed)",
            packed / 1024,
            "KiB",
            changed / 1024,
            packed / changed,
            "<= 2",
        ),
    ]
