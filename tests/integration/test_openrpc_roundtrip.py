"""A client written from protocol/openrpc.json alone reaches every method of a real alpd.

For each method the test builds the call from the document only: every required param,
by name, with a value made from its schema (or a real id where one is needed to get past
the not-found check). The daemon must take the params as described (no -32602, no -32601)
and answer with a result or with one of the domain errors the document lists for it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from daemons import settled, start_headless

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
        pattern = schema.get("pattern")
        return next(
            v for v in ("openrpc-probe", "/tmp") if pattern is None or re.search(pattern, v)
        )
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


def test_errors_methods_answer_in_the_states_they_meet_are_declared(
    isolated_alpd: DaemonProcess, tmp_path: Path
) -> None:
    """Each error below is one a handler raises in a state a client meets every day; each
    must be among the method's declared errors, and the daemon logs none as undeclared
    (alpd.rpc.dispatch logs `undeclared_error` for any it sends that the document lacks)."""
    d = isolated_alpd
    thread = d.call("thread/create", {"title": "probe", "cwd": str(tmp_path)})
    assert isinstance(thread, dict)
    execution = start_headless(d, thread["id"], tmp_path, ["true"])
    settled(d, execution["id"])
    by_name = {m["name"]: m for m in DOCUMENT["methods"]}
    probes: list[tuple[str, dict[str, Any], str]] = [
        ("execution/cancel", {"executionId": execution["id"]}, "EXECUTION_SETTLED"),
        ("execution/attach", {"executionId": execution["id"], "pid": 1}, "EXECUTION_SETTLED"),
        ("execution/settle", {"executionId": execution["id"], "outcome": "completed"},
         "EXECUTION_SETTLED"),
        ("thread/archive", {"threadId": thread["id"]}, "THREAD_NOT_CLOSED"),
        ("context/pin", {"kind": "decision", "text": "x"}, "PIN_OUTSIDE_EXECUTION"),
        ("context/pin", {"kind": "decision", "text": "x" * 4097}, "INVALID_ARGUMENT"),
        ("history/search", {"query": "x", "limit": 201}, "INVALID_ARGUMENT"),
        ("thread/push", {"threadId": thread["id"], "text": "x" * 16385, "source": "ci"},
         "INVALID_ARGUMENT"),
        ("schedule/create", {"threadId": thread["id"], "prompt": "p", "every": "1h",
                             "at": "2030-01-01T00:00:00Z"}, "SCHEDULE_INVALID"),
        ("schedule/create", {"threadId": thread["id"], "prompt": "p"}, "SCHEDULE_INVALID"),
    ]  # fmt: skip
    with RawConnection(d.socket_path) as conn:
        for number, (method, params, expected) in enumerate(probes, start=1):
            reply = conn.request(method, params, id=number)
            name = (reply.get("error", {}).get("data") or {}).get("name")
            assert name == expected, (method, reply)
            assert name in allowed_errors(by_name[method]), (method, name)
    assert "undeclared_error" not in d.log_text()
