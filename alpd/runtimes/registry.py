"""Runtime adapters by name: the built-ins, then third parties' `alp.runtimes` entry points."""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points

from alpd.domain.spelling import did_you_mean
from alpd.errors import RuntimeNotFound
from alpd.runtimes import claude, codex
from alpd.runtimes.base import RuntimeAdapter
from alpd.runtimes.command import CommandRuntime


@cache
def adapters() -> dict[str, RuntimeAdapter]:
    found: dict[str, RuntimeAdapter] = {
        "claude": claude.ADAPTER,
        "codex": codex.ADAPTER,
        "command": CommandRuntime(),
    }
    for entry in entry_points(group="alp.runtimes"):
        found.setdefault(entry.name, entry.load()())
    return found


def adapter(name: str) -> RuntimeAdapter:
    found = adapters().get(name)
    if found is None:
        raise RuntimeNotFound(
            f"no runtime {name!r}{did_you_mean(name, adapters())}; known: "
            f"{', '.join(sorted(adapters()))}",
            runtime=name,
        )
    return found
