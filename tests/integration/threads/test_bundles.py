"""`alp thread export` / `alp thread import` between two real alpds with two homes (issue 24,
point 8): the thread moves with its whole chain, roots, pins and history, continues on the
other host on the same context, re-imports as nothing, and a changed or malformed bundle is
refused before anything is written."""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from daemons import starter
from test_clear_undo import give_history
from test_thread_invariants import context, new_thread, pin_script, rpc_error, run_root

from alpctl.client import RpcError
from alpd.testing.daemon import DaemonProcess

TABLES_WITH_ROWS = ("threads", "snapshots", "executions", "checkpoints", "history_entries")


pytestmark = pytest.mark.both_stores


@contextlib.contextmanager
def own_database(store_backend: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A database of one host's own: its home's SQLite, or a fresh PostgreSQL database (each
    host of these tests has its own: a bundle is for hosts that share none)."""
    if store_backend != "postgres":
        yield None
        return
    cluster = request.getfixturevalue("postgres_cluster")
    url = cluster.new_database()
    try:
        yield url
    finally:
        cluster.drop_database(url)


@pytest.fixture(scope="module")
def hosts(
    tmp_path_factory: pytest.TempPathFactory,
    module_store_url: str | None,
    store_backend: str,
    request: pytest.FixtureRequest,
) -> Iterator[tuple[DaemonProcess, DaemonProcess]]:
    with ExitStack() as stack:
        a = starter(tmp_path_factory.mktemp("host-a"), stack, module_store_url)()
        b_url = stack.enter_context(own_database(store_backend, request))
        b = starter(tmp_path_factory.mktemp("host-b"), stack, b_url)()
        yield a, b


@pytest.fixture(scope="module")
def untouched(
    tmp_path_factory: pytest.TempPathFactory, store_backend: str, request: pytest.FixtureRequest
) -> Iterator[DaemonProcess]:
    """A third host that never imports the thread: every bundle it is given is forged, so
    it checks every record (a host holding the thread compares instead of inserting)."""
    with ExitStack() as stack:
        url = stack.enter_context(own_database(store_backend, request))
        yield starter(tmp_path_factory.mktemp("host-c"), stack, url)()


@pytest.fixture(scope="module")
def moved(
    hosts: tuple[DaemonProcess, DaemonProcess], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    """A thread made on A (two pinning roots, a clear, history), exported to a file."""
    a, _ = hosts
    base = tmp_path_factory.mktemp("moved")
    work = base / "work"
    work.mkdir()
    thread_id = new_thread(a, work, title="bundle me")
    first = run_root(a, thread_id, pin_script(("objective", "ship the parser")), work)
    give_history(a, thread_id, first["id"], "the parser reads TOML", base)
    a.call("thread/clear", {"threadId": thread_id})
    run_root(a, thread_id, pin_script(("decision", "use tomllib")), work)
    bundle = base / "thread.alp.gz"
    done = a.cli("thread", "export", thread_id, "-o", str(bundle), "--json")
    assert done.returncode == 0, done.stderr
    return {"thread": thread_id, "bundle": bundle, "work": work, "result": json.loads(done.stdout)}


def lines_of(bundle: Path) -> list[bytes]:
    return gzip.decompress(bundle.read_bytes()).splitlines(keepends=True)


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(gzip.compress(b"".join(lines)))
    return path


def with_manifest_recomputed(lines: list[bytes]) -> list[bytes]:
    """The bundle's manifest made to agree with its (changed) records, as someone who
    edits a bundle on purpose would."""
    tables: dict[str, Any] = {}
    counts: dict[str, int] = {}
    records = hashlib.sha256()
    for line in lines[1:-1]:
        table = json.loads(line)["table"]
        tables.setdefault(table, hashlib.sha256()).update(line)
        counts[table] = counts.get(table, 0) + 1
        records.update(line)
    manifest = {
        "counts": counts,
        "digests": {t: "sha256:" + h.hexdigest() for t, h in tables.items()},
        "records": "sha256:" + records.hexdigest(),
        "header": "sha256:" + hashlib.sha256(lines[0]).hexdigest(),
    }
    return [*lines[:-1], json.dumps({"manifest": manifest}).encode() + b"\n"]


def edited(lines: list[bytes], table: str, edit: Any) -> list[bytes]:
    """`lines` with the first record of `table` changed by `edit(row)`."""
    out, done = [], False
    for line in lines:
        record = json.loads(line) if line.startswith(b'{"table"') else None
        if record is not None and record["table"] == table and not done:
            edit(record["row"])
            line, done = json.dumps(record).encode() + b"\n", True
        out.append(line)
    assert done
    return out


def test_export_writes_a_manifest_with_counts_and_digests(moved: dict[str, Any]) -> None:
    lines = lines_of(moved["bundle"])
    header, manifest = json.loads(lines[0]), json.loads(lines[-1])["manifest"]
    assert header["alpBundle"] == 1 and header["threadId"] == moved["thread"]
    assert all(manifest["counts"][table] >= 1 for table in TABLES_WITH_ROWS)
    assert manifest["counts"] == moved["result"]["counts"]
    assert sum(manifest["counts"].values()) == len(lines) - 2
    assert set(manifest["digests"]) == set(manifest["counts"])


def test_an_imported_thread_continues_on_the_other_host_with_the_same_context(
    hosts: tuple[DaemonProcess, DaemonProcess], moved: dict[str, Any], tmp_path: Path
) -> None:
    a, b = hosts
    thread_id = moved["thread"]
    done = b.cli("thread", "import", str(moved["bundle"]), "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["imported"] is True and result["thread"]["id"] == thread_id
    assert (
        result["thread"]["ownerUid"]
        == a.call("thread/show", {"threadId": thread_id})["thread"]["ownerUid"]
    )  # the importing person (the same uid here)
    on_a, on_b = context(a, thread_id), context(b, thread_id)
    assert on_b["digest"] == on_a["digest"] and on_b["revision"] == on_a["revision"]
    assert [r["id"] for r in b.call("thread/show", {"threadId": thread_id})["roots"]] == [
        r["id"] for r in a.call("thread/show", {"threadId": thread_id})["roots"]
    ]
    # The history came along: the transcript on B shows A's exchange.
    items = b.call("thread/transcript", {"threadId": thread_id})["items"]
    assert any("the parser reads TOML" in json.dumps(item) for item in items)
    # B continues it: the new root is bound to the very snapshot A ended on.
    work = tmp_path / "b-work"
    work.mkdir()
    root = run_root(b, thread_id, 'cat "$ALP_SESSION_CONTEXT" > seen.md', work)
    binding = root["policy"]["binding"]
    assert binding["contextDigest"] == on_a["digest"]
    assert binding["contextRevision"] == on_a["revision"]
    assert "use tomllib" in (work / "seen.md").read_text()


def test_a_bundle_continues_on_a_host_with_its_own_sqlite(
    moved: dict[str, Any], hosts: tuple[DaemonProcess, DaemonProcess], tmp_path: Path
) -> None:
    """Exported from A (on PostgreSQL in the second run), imported by a host keeping its own
    SQLite file: the same context, and a root continues on it."""
    a, _ = hosts
    with ExitStack() as stack:
        (tmp_path / "laptop").mkdir()
        laptop = starter(tmp_path / "laptop", stack)()
        assert "ALP_STORE_URL" not in laptop.env
        done = laptop.cli("thread", "import", str(moved["bundle"]), "--json")
        assert done.returncode == 0, done.stderr
        on_a, here = context(a, moved["thread"]), context(laptop, moved["thread"])
        assert (here["digest"], here["revision"]) == (on_a["digest"], on_a["revision"])
        work = tmp_path / "laptop-work"
        work.mkdir()
        root = run_root(laptop, moved["thread"], 'cat "$ALP_SESSION_CONTEXT" > seen.md', work)
        assert root["policy"]["binding"]["contextDigest"] == on_a["digest"]
        assert "use tomllib" in (work / "seen.md").read_text()


def test_importing_the_same_bundle_again_changes_nothing(
    hosts: tuple[DaemonProcess, DaemonProcess], moved: dict[str, Any], tmp_path: Path
) -> None:
    a, _ = hosts
    # A still holds the thread as the bundle has it: importing it there is a no-op.
    before = a.call("thread/show", {"threadId": moved["thread"]})
    result = a.call("thread/import", {"path": str(moved["bundle"])})
    assert result["imported"] is False
    assert a.call("thread/show", {"threadId": moved["thread"]}) == before
    done = a.cli("thread", "import", str(moved["bundle"]))
    assert done.returncode == 0 and "nothing changed" in done.stdout


def test_a_thread_that_went_on_here_is_bundle_conflict(
    hosts: tuple[DaemonProcess, DaemonProcess], moved: dict[str, Any]
) -> None:
    _, b = hosts
    with contextlib.suppress(RpcError):  # imported here before, and gone on since
        b.call("thread/import", {"path": str(moved["bundle"])})
    b.call("thread/clear", {"threadId": moved["thread"]})
    error = rpc_error(b, "thread/import", {"path": str(moved["bundle"])})
    assert error.name == "BUNDLE_CONFLICT"
    assert "not merged" in error.message


@pytest.mark.parametrize(
    ("table", "edit"),
    [
        ("history_entries", lambda row: row.update(text="the parser reads YAML")),
        ("executions", lambda row: row.update(agent="someone-else")),
        ("snapshots", lambda row: row.update(digest="sha256:" + "0" * 64)),
        ("checkpoints", lambda row: row.update(digest="sha256:" + "1" * 64)),
    ],
)
def test_an_edited_record_is_bundle_tampered_naming_it(
    untouched: DaemonProcess,
    moved: dict[str, Any],
    tmp_path: Path,
    table: str,
    edit: Any,
) -> None:
    c = untouched
    lines = edited(lines_of(moved["bundle"]), table, edit)
    # Changed bytes under the old manifest: the manifest names the table.
    error = rpc_error(c, "thread/import", {"path": str(write_lines(tmp_path / "x.gz", lines))})
    assert error.name == "BUNDLE_TAMPERED" and error.data["what"] == table
    # The manifest recomputed too: the record's own digest names it.
    forged = write_lines(tmp_path / "y.gz", with_manifest_recomputed(lines))
    error = rpc_error(c, "thread/import", {"path": str(forged)})
    assert error.name == "BUNDLE_TAMPERED", error.message
    assert error.data["what"] == table


def test_a_changed_byte_of_the_gzip_is_refused(
    hosts: tuple[DaemonProcess, DaemonProcess], moved: dict[str, Any], tmp_path: Path
) -> None:
    _, b = hosts
    data = bytearray(moved["bundle"].read_bytes())
    data[len(data) // 2] ^= 0x20
    path = tmp_path / "flipped.gz"
    path.write_bytes(bytes(data))
    error = rpc_error(b, "thread/import", {"path": str(path)})
    assert error.name in ("BUNDLE_TAMPERED", "BUNDLE_INVALID")


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda lines: b"not a bundle at all\n", "not gzip"),
        (lambda lines: gzip.compress(b"".join(lines[:-1])), "truncated"),
        (lambda lines: gzip.compress(b'{"alpBundle": 9}\n' + b"".join(lines[1:])), "format 9"),
        (lambda lines: gzip.compress(b"".join(lines))[:-20], "ends early"),
    ],
)
def test_a_malformed_bundle_is_bundle_invalid(
    hosts: tuple[DaemonProcess, DaemonProcess],
    moved: dict[str, Any],
    tmp_path: Path,
    make: Any,
    says: str,
) -> None:
    _, b = hosts
    path = tmp_path / "bad.gz"
    path.write_bytes(make(lines_of(moved["bundle"])))
    error = rpc_error(b, "thread/import", {"path": str(path)})
    assert error.name == "BUNDLE_INVALID", error.message
    assert says in error.message


def test_a_refused_bundle_leaves_nothing_behind(
    untouched: DaemonProcess, moved: dict[str, Any], tmp_path: Path
) -> None:
    # The last history entry is refused after everything before it was inserted.
    lines = lines_of(moved["bundle"])
    last = max(i for i, line in enumerate(lines) if b'"table":"history_entries"' in line)
    record = json.loads(lines[last])
    record["row"]["text"] = "changed"
    lines[last] = json.dumps(record).encode() + b"\n"
    forged = write_lines(tmp_path / "e.gz", with_manifest_recomputed(lines))
    assert rpc_error(untouched, "thread/import", {"path": str(forged)}).name == "BUNDLE_TAMPERED"
    shown = rpc_error(untouched, "thread/show", {"threadId": moved["thread"]})
    assert shown.name == "THREAD_NOT_FOUND"
    assert untouched.call("thread/list", {"all": True})["threads"] == []


def test_export_to_stdout_and_the_daemon_keeps_no_copy(
    hosts: tuple[DaemonProcess, DaemonProcess], moved: dict[str, Any], tmp_path: Path
) -> None:
    a, _ = hosts
    target = tmp_path / "out.alp.gz"
    with target.open("wb") as out:
        done = subprocess.run(
            [sys.executable, "-m", "alpctl", "thread", "export", moved["thread"]],
            stdout=out,
            stderr=subprocess.PIPE,
            env=a.env,
            check=False,
        )
    assert done.returncode == 0, done.stderr
    assert b"exported thread" in done.stderr
    assert json.loads(lines_of(target)[0])["threadId"] == moved["thread"]
    assert list((a.home / "bundles").iterdir()) == []


def test_a_bundle_carries_its_bytes_values_as_base64(moved: dict[str, Any]) -> None:
    policy = next(
        json.loads(line)["row"]["policy"]
        for line in lines_of(moved["bundle"])
        if line.startswith(b'{"table":"executions"')
    )
    assert json.loads(base64.b64decode(policy["$b64"]))["binding"]["id"] == moved["thread"]
