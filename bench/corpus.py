"""Corpora of Claude Code transcripts for the benchmarks, in two shapes, generated once and cached.

* **large** — few big files (`large(mb)`): blocks of BLOCK_FILES sessions of FILE_MB each, a
  turn being a harness attachment, a prompt, a reply, a Bash call, its output and a reply.
* **sessions** — many small ones, what `~/.claude/projects` holds after a few months of work
  (`sessions(mb)`): files of 20–400 KB (log-normal, median ~110 KB), 5–40 turns each, spread
  over project directories of SESSIONS_PER_BLOCK sessions. Every line is a real line of the
  Claude Code fixtures (`tests/fixtures/runtimes/claude`) with its ids, times and texts
  replaced: queue operations, prompts, harness attachments (environment, skills, prompt
  snapshots), API request records, assistant replies, tool calls and their results.

Text is drawn from the words of this Python's stdlib sources with their frequencies (a
Zipf-like mix of English and identifiers). Session k of either shape holds the word
`codename(k)` in a few of its prompts: "the session where I worked on X", which `rg -l` must
read every file to find. Block i is the same in every size, so a 1 GB set is the 300 MB set
plus more. Data lives under ALP_BENCH_DATA (default /tmp/alp-bench-history), never in the repo.
"""

from __future__ import annotations

import copy
import os
import random
import re
import uuid
from collections import Counter
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

__all__ = [
    "BLOCK_FILES",
    "DATA",
    "codename",
    "files_of",
    "large",
    "sessions",
    "text_drawer",
    "total_bytes",
    "vocabulary",
]

DATA = Path(os.environ.get("ALP_BENCH_DATA", "/tmp/alp-bench-history"))
FIXTURES = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "runtimes" / "claude"
SEED = 20261130
FILE_MB = 4
BLOCK_FILES = 5
SESSIONS_PER_BLOCK = 100
MIN_SESSION, MAX_SESSION = 20_000, 400_000


@cache
def vocabulary() -> tuple[list[str], list[int]]:
    """Words of this Python's stdlib sources with their frequencies (a Zipf-like mix)."""
    counts: Counter[str] = Counter()
    stdlib = Path(os.__file__).parent
    for path in sorted(stdlib.glob("*.py"))[:120]:
        counts.update(re.findall(r"[a-z]{3,12}", path.read_text(errors="replace").lower()))
    ranked = counts.most_common()
    return [w for w, _ in ranked], [c for _, c in ranked]


@cache
def _pool() -> str:
    words, weights = vocabulary()
    return " ".join(random.Random(SEED).choices(words, weights, k=1_200_000))


def codename(k: int) -> str:
    return f"codename{k:05d}"


class _Text:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pool = _pool()

    def __call__(self, low: int, high: int) -> str:
        size = int(self.rng.lognormvariate(0, 1) * (low + high) / 4) % (high - low) + low
        start = self.rng.randrange(0, len(self.pool) - size - 1)
        return self.pool[start : start + size]


def text_drawer(seed: int) -> _Text:
    """`draw(low, high)`: a text of `low`–`high` characters (log-normal), as the corpora's."""
    return _Text(random.Random(seed))


# the large shape (few big files)


def _large_session(path: Path, seed: int, name: str) -> None:
    rng = random.Random(seed)
    text = _Text(rng)
    session = str(uuid.UUID(int=rng.getrandbits(128)))
    enc = msgspec.json.Encoder()
    written, turn = 0, 0
    with path.open("wb") as f:
        while written < FILE_MB * 1_000_000:
            turn += 1
            ts = f"2026-11-{1 + turn % 28:02d}T10:{turn % 60:02d}:00.000Z"
            prompt = text(40, 600) + (f" ({name})" if turn % 50 == 1 else "")
            call = f"toolu_{turn:08d}"
            usage = {"input_tokens": 1200, "output_tokens": 80}

            def line(kind: str, message: Any) -> dict[str, Any]:
                return {
                    "type": kind,
                    "uuid": str(uuid.UUID(int=rng.getrandbits(128))),
                    "sessionId": session,
                    "timestamp": ts,  # noqa: B023
                    "message": message,
                }

            model = "claude-sonnet-bench"
            records = [
                {"type": "attachment", "sessionId": session, "content": text(2000, 12000)},
                line("user", {"role": "user", "content": prompt}),
                line(
                    "assistant",
                    {
                        "model": model,
                        "content": [{"type": "text", "text": text(200, 2500)}],
                        "usage": usage,
                    },
                ),
                line(
                    "assistant",
                    {
                        "model": model,
                        "content": [
                            {
                                "type": "tool_use",
                                "id": call,
                                "name": "Bash",
                                "input": {"command": text(20, 300)},
                            }
                        ],
                    },
                ),
                line(
                    "user",
                    {
                        "role": "user",
                        "content": [
                            {
                                "type": "tool_result",
                                "tool_use_id": call,
                                "content": text(300, 20000),
                            }
                        ],
                    },
                ),
                line(
                    "assistant",
                    {
                        "model": model,
                        "content": [{"type": "text", "text": text(100, 1500)}],
                        "usage": usage,
                    },
                ),
            ]
            for record in records:
                data = enc.encode(record) + b"\n"
                f.write(data)
                written += len(data)


def large(total_mb: int) -> list[Path]:
    """Directories of big sessions adding up to ~`total_mb` MB (blocks of BLOCK_FILES ×
    FILE_MB); file k holds `codename(k)`."""
    count = max(1, round(total_mb / (BLOCK_FILES * FILE_MB)))
    out = []
    for i in range(count):
        directory = DATA / "v3" / f"block-{i:04d}"
        if not (directory / ".complete").exists():
            directory.mkdir(parents=True, exist_ok=True)
            for j in range(BLOCK_FILES):
                k = i * BLOCK_FILES + j
                path = directory / f"{uuid.UUID(int=SEED * 1_000_003 + k)}.jsonl"
                _large_session(path, SEED + k, codename(k))
            (directory / ".complete").touch()
        out.append(directory)
    return out


# the sessions shape (many small files from real line shapes)


def _kind(record: dict[str, Any]) -> str:
    kind = str(record.get("type"))
    if kind == "attachment":
        return f"attachment:{record['attachment'].get('type')}"
    if kind in ("user", "assistant"):
        content = record["message"].get("content")
        first = "str" if isinstance(content, str) else content[0].get("type")
        return f"{kind}:{first}"
    return kind


@cache
def _templates() -> dict[str, dict[str, Any]]:
    """The first line of every kind in the Claude fixtures."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted(FIXTURES.glob("*.jsonl")):
        for raw in path.read_bytes().splitlines():
            record = msgspec.json.decode(raw)
            found.setdefault(_kind(record), record)
    return found


# A session's first turn carries the harness's set-up attachments; later ones some of them.
_FIRST_TURN = (
    "attachment:environment",
    "attachment:session_context",
    "attachment:model",
    "attachment:deferred_tools_delta",
    "attachment:agent_listing_delta",
    "attachment:skill_listing",
    "attachment:date",
)
_TOOLS = ("Bash", "Read", "Edit", "Grep", "Write")


class _Session:
    """One generated session file from the fixture templates."""

    def __init__(self, rng: random.Random, name: str, project: str) -> None:
        self.rng = rng
        self.text = _Text(rng)
        self.name = name
        self.session = str(uuid.UUID(int=rng.getrandbits(128)))
        self.cwd = f"/home/dev/{project}"
        self.parent: str | None = None
        self.clock = rng.randrange(0, 86400 * 200)
        self.templates = _templates()

    def _line(self, kind: str) -> dict[str, Any]:
        record = copy.deepcopy(self.templates[kind])
        self.clock += self.rng.randrange(1, 40)
        day, second = divmod(self.clock, 86400)
        stamp = (
            f"2026-{1 + day // 28 % 12:02d}-{1 + day % 28:02d}T"
            f"{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}.000Z"
        )
        record["timestamp"] = stamp
        record["sessionId"] = self.session
        if "uuid" in record:
            record["uuid"] = str(uuid.UUID(int=self.rng.getrandbits(128)))
            record["parentUuid"] = self.parent
            self.parent = record["uuid"]
        if "cwd" in record:
            record["cwd"] = self.cwd
        return record

    def turn(self, n: int, budget: int) -> Iterator[dict[str, Any]]:
        rng, text = self.rng, self.text
        prompt = text(30, 800) + (f" ({self.name})" if n % 7 == 1 else "")
        enqueue = self._line("queue-operation")
        enqueue["content"] = prompt
        yield enqueue
        user = self._line("user:str")
        user["message"]["content"] = prompt
        yield user
        for kind in _FIRST_TURN if n == 1 else ("attachment:date",) * (rng.random() < 0.3):
            yield self._line(kind)
        if rng.random() < 0.25:
            yield self._line("attachment:prompt_snapshot")
        yield self._line("api-request")
        if rng.random() < 0.5:
            yield self._line("api-request-blob")
        for call in range(rng.choice((0, 1, 1, 2, 3, 4, 6))):
            tool = rng.choice(_TOOLS)
            use = self._line("assistant:tool_use")
            block = use["message"]["content"][0]
            block["id"] = f"toolu_{self.session[:8]}_{n}_{call}"
            block["name"] = tool
            block["input"] = {"command" if tool == "Bash" else "file_path": text(20, 200)}
            yield use
            output = text(100, max(200, min(budget // 3, 30_000)))
            result = self._line("user:tool_result")
            result_block = result["message"]["content"][0]
            result_block["tool_use_id"] = block["id"]
            result_block["content"] = output
            result["toolUseResult"] = {"stdout": output, "stderr": "", "interrupted": False}
            yield result
        reply = self._line("assistant:text")
        reply["message"]["content"][0]["text"] = text(80, max(200, min(budget // 4, 6_000)))
        yield reply
        yield self._line("last-prompt")
        if rng.random() < 0.3:
            yield self._line("cost-state")

    def write(self, path: Path, target: int, turns: int) -> None:
        enc = msgspec.json.Encoder()
        written = 0
        with path.open("wb") as f:
            for n in range(1, turns + 1):
                budget = max(2_000, (target - written) // (turns - n + 1))
                for record in self.turn(n, budget):
                    data = enc.encode(record) + b"\n"
                    f.write(data)
                    written += len(data)
                if written >= target and n >= 5:
                    break


def _session_size(rng: random.Random) -> int:
    return int(min(MAX_SESSION, max(MIN_SESSION, rng.lognormvariate(11.6, 0.8))))


def sessions(total_mb: int) -> list[Path]:
    """Project directories of SESSIONS_PER_BLOCK sessions each adding up to ~`total_mb` MB;
    session k holds `codename(k)`."""
    out: list[Path] = []
    size, i = 0, 0
    while size < total_mb * 1_000_000:
        directory = DATA / "sessions-v1" / f"-home-dev-project{i:04d}"
        marker = directory / ".complete"
        if not marker.exists():
            directory.mkdir(parents=True, exist_ok=True)
            for j in range(SESSIONS_PER_BLOCK):
                k = i * SESSIONS_PER_BLOCK + j
                rng = random.Random(SEED * 7 + k)
                session = _Session(rng, codename(k), f"project{i:04d}")
                path = directory / f"{session.session}.jsonl"
                session.write(path, _session_size(rng), rng.randint(5, 40))
            marker.write_text(str(sum(p.stat().st_size for p in directory.glob("*.jsonl"))))
        size += int(marker.read_text())
        out.append(directory)
        i += 1
    return out


def files_of(directories: list[Path]) -> list[Path]:
    return sorted(path for directory in directories for path in directory.rglob("*.jsonl"))


def total_bytes(directories: list[Path]) -> int:
    return sum(p.stat().st_size for p in files_of(directories))
