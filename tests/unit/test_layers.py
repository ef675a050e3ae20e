"""The layers of docs/architecture.md, read from the source: SQL only in the store, arrows one
way (doors → services → domain/store), the client apart from the daemon, short files.

Each check reads the files as text or as syntax trees, so a module added tomorrow is covered
without being named here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALPD = ROOT / "alpd"

#: what a statement of SQL starts with; the store is the only place that may say it
SQL_WORD = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b")
#: the packages that ask the store for work and must not write SQL or hold a connection
SQL_FREE = ("services", "web", "channels", "background", "rpc", "runtimes", "supervisor")
#: a file longer than this says why in a comment starting with `# long:`
LONG_FILE = 420


def _python_files(*parts: str) -> Iterator[Path]:
    for part in parts:
        yield from sorted((ROOT / part).rglob("*.py"))


def _imports(path: Path) -> set[str]:
    """Every module `path` imports, at any depth (TYPE_CHECKING blocks included)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("package", SQL_FREE)
def test_no_sql_outside_the_store(package: str) -> None:
    offending = [
        f"{_relative(path)}:{number}: {line.strip()}"
        for path in _python_files(f"alpd/{package}")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if SQL_WORD.search(line)
    ]
    assert offending == [], "SQL belongs in alpd/store/ (docs/architecture.md)"


@pytest.mark.parametrize("package", SQL_FREE)
def test_only_the_store_touches_a_database_connection(package: str) -> None:
    offending = [
        f"{_relative(path)} imports {name}"
        for path in _python_files(f"alpd/{package}")
        for name in sorted(_imports(path))
        if name.split(".")[0] in {"sqlite3", "aiosqlite", "psycopg", "psycopg_pool"}
    ]
    assert offending == []


def test_the_client_imports_nothing_of_the_daemon() -> None:
    offending = [
        f"{_relative(path)} imports {name}"
        for path in _python_files("alpctl", "protocol")
        for name in sorted(_imports(path))
        if name == "alpd" or name.startswith("alpd.")
    ]
    assert offending == []


#: package → the alpd packages it must never import (the arrows point the other way)
FORBIDDEN = {
    "alpd/domain": ("alpd.store", "alpd.services", "alpd.rpc", "alpd.web", "alpd.background"),
    "alpd/store": ("alpd.services", "alpd.rpc", "alpd.web", "alpd.background"),
    "alpd/services": (
        "alpd.rpc",
        "alpd.web",
        "alpd.channels",
        "alpd.background",
        "alpd.daemon",
        "alpd.assembly",
    ),
    # a chat door reaches the services through the dispatcher, as the page does; its
    # state (cursors, paired senders, nonces) through alpd.services.channels, never the store
    "alpd/channels": ("alpd.store", "alpd.web", "alpd.background", "alpd.daemon", "alpd.assembly"),
}


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_arrows_point_one_way(package: str) -> None:
    forbidden = FORBIDDEN[package]
    offending = [
        f"{_relative(path)} imports {name}"
        for path in _python_files(package)
        for name in sorted(_imports(path))
        if any(name == f or name.startswith(f + ".") for f in forbidden)
    ]
    assert offending == []


#: capability → the other capabilities its services may use (each package's __init__ says so)
CAPABILITY_USES = {
    "threads": {"runs", "history"},
    "runs": {"threads", "recap", "history", "memory"},
    "history": {"runs"},
    "conversation": {"threads", "runs", "history", "schedules", "memory"},
    "schedules": {"threads", "runs", "conversation", "budgets"},
    "recap": {"threads", "runs", "history", "conversation"},
    "memory": {"threads", "runs"},
    "channels": {"runs", "threads"},
    "checkpoints": {"threads", "runs"},
    "bundles": {"threads", "runs"},
    "budgets": {"threads", "runs"},
    "hosts": {"runs"},
}


@pytest.mark.parametrize("capability", sorted(CAPABILITY_USES))
def test_a_capability_uses_only_the_ones_it_names(capability: str) -> None:
    allowed = CAPABILITY_USES[capability] | {capability, "context"}
    offending = [
        f"{_relative(path)} imports {name}"
        for path in _python_files(f"alpd/services/{capability}")
        for name in sorted(_imports(path))
        if name.startswith("alpd.services.") and name.split(".")[2] not in allowed
    ]
    assert offending == [], "add it to its __init__ and CAPABILITY_USES, or go through another"
    documented = ast.get_docstring(
        ast.parse((ALPD / "services" / capability / "__init__.py").read_text())
    )
    assert documented is not None
    for used in CAPABILITY_USES[capability]:
        assert f"services.{used}" in documented, f"{capability}/__init__.py names {used}"


def test_the_domain_does_no_io() -> None:
    io_modules = {"aiosqlite", "anyio", "asyncio", "socket", "subprocess", "psutil", "structlog"}
    offending = [
        f"{_relative(path)} imports {name}"
        for path in _python_files("alpd/domain")
        for name in sorted(_imports(path))
        if name.split(".")[0] in io_modules
    ]
    assert offending == []


def test_every_package_says_what_it_owns() -> None:
    silent = [
        _relative(init)
        for init in sorted(ALPD.rglob("__init__.py"))
        if not ast.get_docstring(ast.parse(init.read_text()))
    ]
    assert silent == []


def test_a_long_file_says_why() -> None:
    unexplained = [
        f"{_relative(path)} ({count} lines)"
        for path in _python_files("alpd")
        if (count := len(path.read_text().splitlines())) > LONG_FILE
        and "# long:" not in path.read_text()
    ]
    assert unexplained == [], "split it by job, or say why in a `# long:` comment"
