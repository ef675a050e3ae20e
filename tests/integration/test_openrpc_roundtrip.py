"""A client written from protocol/openrpc.json alone reaches every method of a real alpd.

For each method the test builds the call from the document only: every required param,
by name, with a value made from its schema (or a real id where one is needed to get past
the not-found check). The daemon must take the params as described (no -32602, no -32601)
and answer with a result or with one of the domain errors the document lists for it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from alpd.testing.daemon import DaemonProcess, running_daemon
from protocol import openrpc
from tests.integration.wire import RawConnection

DOCUMENT = json.loads(Path(openrpc.__file__).with_name("openrpc.json").read_text())


def resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        path = schema["$ref"].removeprefix("#/").split("/")
        target: Any = DOCUMENT
        for part in path:
            target = target[part]
        schema = target
    return schema


def example(schema: dict[str, Any]) -> Any:
    """The simplest value the schema admits."""
    schema = resolve(schema)
    if "anyOf" in schema:
        options = [o for o in schema["anyOf"] if resolve(o).get("type") != "null"]
        return example(options[0])
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        return "/tmp" if schema.get("pattern", "").startswith("^/") else "openrpc-probe"
    if kind == "integer":
        return max(schema.get("minimum", 1), 1)
    if kind == "number":
        return 1.0
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        required = schema.get("required", [])
        return {
            name: example(s) for name, s in schema.get("properties", {}).items() if name in required
        }
    raise AssertionError(f"no example for {schema}")


def call_for(method: dict[str, Any], known: dict[str, Any]) -> dict[str, Any]:
    return {
        p["name"]: known.get(p["name"], example(p["schema"]))
        for p in method["params"]
        if p["required"]
    }


def allowed_errors(method: dict[str, Any]) -> set[str]:
    return {ref["$ref"].rsplit("/", 1)[1] for ref in method["errors"]}


@pytest.fixture
def isolated_alpd(tmp_path: Path) -> Any:
    user_home = tmp_path / "user"
    user_home.mkdir()
    env = {"HOME": str(user_home), "CODEX_HOME": str(user_home / ".codex")}
    with running_daemon(tmp_path, extra_env=env) as daemon:
        yield daemon


def test_a_call_generated_from_the_document_reaches_every_method(
    isolated_alpd: DaemonProcess,
) -> None:
    thread = isolated_alpd.call("thread/create", {"title": "probe", "cwd": "/tmp"})
    assert isinstance(thread, dict)
    known = {"threadId": thread["id"]}
    answered: dict[str, str] = {}
    # daemon/stop ends the daemon: it goes last
    methods = sorted(DOCUMENT["methods"], key=lambda m: m["name"] == "daemon/stop")
    with RawConnection(isolated_alpd.socket_path) as conn:
        for number, method in enumerate(methods, start=1):
            reply = conn.request(method["name"], call_for(method, known), id=number)
            assert reply["id"] == number
            if "error" in reply:
                name = (reply["error"].get("data") or {}).get("name")
                assert name in allowed_errors(method), (method["name"], reply["error"])
                answered[method["name"]] = name
            else:
                answered[method["name"]] = "result"
    assert list(answered) == [m["name"] for m in methods]
    assert answered["thread/show"] == "result"
    assert answered["execution/show"] == "EXECUTION_NOT_FOUND"


def test_a_param_the_document_does_not_name_is_not_what_the_server_reads(
    isolated_alpd: DaemonProcess,
) -> None:
    """The old shape (one parameter called `params`) would be refused: the document and the
    server agree on by-name params."""
    with RawConnection(isolated_alpd.socket_path) as conn:
        reply = conn.request("thread/show", {"params": {"threadId": "thread_x"}})
    assert reply["error"]["code"] == -32602
