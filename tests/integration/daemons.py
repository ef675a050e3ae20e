"""A real alpd for the integration tests: the factory behind the `start_alpd` fixtures
(tests/integration/conftest.py), and the reads and waits many test files make."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Protocol

from alpd.testing.daemon import DaemonProcess, running_daemon

#: a root that runs until the file `release` appears in its directory
BLOCKER = ["sh", "-c", "while [ ! -f release ]; do sleep 0.05; done"]


class StartAlpd(Protocol):
    def __call__(
        self, config: str | None = None, *, extra_env: Mapping[str, str] | None = None
    ) -> DaemonProcess: ...


def starter(base: Path, stack: ExitStack, store_url: str | None = None) -> StartAlpd:
    """A function that starts alpd with its home in `base`, reading `config` as its
    config.toml when given, on the PostgreSQL database `store_url` when given (SQLite in the
    home otherwise); the daemon stops when `stack` closes."""
    store_env = {"ALP_STORE_URL": store_url} if store_url else {}

    def start(
        config: str | None = None, *, extra_env: Mapping[str, str] | None = None
    ) -> DaemonProcess:
        args: list[str] = []
        if config is not None:
            path = base / "config.toml"
            path.write_text(config)
            args = ["--config", str(path)]
        env = {**store_env, **(extra_env or {})}
        return stack.enter_context(running_daemon(base, extra_env=env, extra_args=args))

    return start


def settled(d: DaemonProcess, execution_id: str, timeout: float = 60.0) -> dict[str, Any]:
    """The execution once it has settled (`execution/wait` until then)."""
    deadline = time.monotonic() + timeout
    while True:
        execution = d.call("execution/wait", {"executionId": execution_id, "timeout": 2})
        assert isinstance(execution, dict)
        if execution["status"] == "settled":
            return execution
        assert time.monotonic() < deadline, f"{execution_id} did not settle"


def start_headless(d: DaemonProcess, thread_id: str, cwd: Path, args: list[str]) -> dict[str, Any]:
    """A headless root of `thread_id` running `args` (the `command` runtime) in `cwd`; its
    execution."""
    started = d.call(
        "thread/continue",
        {"threadId": thread_id, "runtime": "command", "headless": True, "cwd": str(cwd),
         "args": args},
    )  # fmt: skip
    assert isinstance(started, dict)
    return dict(started["execution"])


def thread_show(d: DaemonProcess, thread_id: str) -> dict[str, Any]:
    shown = d.call("thread/show", {"threadId": thread_id})
    assert isinstance(shown, dict)
    return shown


def roots(d: DaemonProcess, thread_id: str) -> list[dict[str, Any]]:
    return list(thread_show(d, thread_id)["roots"])


def cli_json(d: DaemonProcess, *args: str, cwd: Path | None = None) -> Any:
    """`alp ARGS… --json`, which must succeed; its parsed output."""
    done = d.cli(*args, "--json", cwd=str(cwd) if cwd else None)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return json.loads(done.stdout)
