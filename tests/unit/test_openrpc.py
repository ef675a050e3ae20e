"""The checked-in OpenRPC document is what the wire types generate, and it is complete."""

from __future__ import annotations

import json
from pathlib import Path

from protocol import openrpc
from protocol.errors import DOMAIN_ERRORS
from protocol.messages import NOTIFICATIONS
from protocol.methods import COMMON_ERRORS, METHODS

CHECKED_IN = Path(openrpc.__file__).with_name("openrpc.json")


def test_checked_in_openrpc_is_not_stale() -> None:
    assert CHECKED_IN.read_text() == openrpc.render(), "run `make openrpc` and commit the result"


def test_openrpc_lists_every_method_and_error() -> None:
    document = json.loads(CHECKED_IN.read_text())
    assert [m["name"] for m in document["methods"]] == list(METHODS)
    assert set(document["components"]["errors"]) == set(DOMAIN_ERRORS)


def test_openrpc_schema_references_resolve() -> None:
    text = CHECKED_IN.read_text()
    schemas = json.loads(text)["components"]["schemas"]
    for ref in {part.split('"')[0] for part in text.split('"$ref": "#/components/schemas/')[1:]}:
        assert ref in schemas, ref


def test_domain_error_codes_are_unique_and_outside_the_reserved_range() -> None:
    codes = [code for code, _ in DOMAIN_ERRORS.values()]
    assert len(codes) == len(set(codes))
    assert all(not -32768 <= code <= -32000 for code in codes)


def test_openrpc_params_are_the_fields_the_server_reads_by_name() -> None:
    document = json.loads(CHECKED_IN.read_text())
    by_name = {m["name"]: m for m in document["methods"]}
    assert by_name["daemon/ping"]["params"] == []
    show = {p["name"]: p["required"] for p in by_name["thread/show"]["params"]}
    assert show == {"threadId": True}
    assert all(p["name"] != "params" for m in document["methods"] for p in m["params"])


def test_every_method_lists_known_domain_errors() -> None:
    document = json.loads(CHECKED_IN.read_text())
    for method in document["methods"]:
        names = [ref["$ref"].rsplit("/", 1)[1] for ref in method["errors"]]
        assert set(names) <= set(DOMAIN_ERRORS), method["name"]
        assert set(COMMON_ERRORS) <= set(names)
    pin = next(m for m in document["methods"] if m["name"] == "context/pin")
    assert {"$ref": "#/components/errors/PIN_OUTSIDE_EXECUTION"} in pin["errors"]


def test_notifications_are_described_with_their_params() -> None:
    document = json.loads(CHECKED_IN.read_text())
    notes = {n["name"]: n for n in document["x-notifications"]}
    assert set(notes) == set(NOTIFICATIONS)
    assert {p["name"] for p in notes["thread/changed"]["params"]} == {"thread", "change"}


def test_no_schema_reference_chain_is_a_cycle() -> None:
    """The OpenRPC dereferencer expands $refs in place: a cycle would never end."""
    schemas = json.loads(CHECKED_IN.read_text())["components"]["schemas"]

    def refs(node: object) -> list[str]:
        if isinstance(node, dict):
            own = [node["$ref"].rsplit("/", 1)[1]] if "$ref" in node else []
            return own + [r for v in node.values() for r in refs(v)]
        if isinstance(node, list):
            return [r for v in node for r in refs(v)]
        return []

    def reaches_itself(start: str) -> bool:
        seen, todo = set(), refs(schemas[start])
        while todo:
            name = todo.pop()
            if name == start:
                return True
            if name not in seen:
                seen.add(name)
                todo += refs(schemas[name])
        return False

    assert not [name for name in schemas if reaches_itself(name)]
    tree = schemas["TreeNode"]["properties"]["children"]["items"]
    assert tree["x-recursive"] == "#/components/schemas/TreeNode"


def test_the_limits_the_daemon_enforces_are_in_the_document() -> None:
    """Each limit a service checks itself (with a named error, not at decode) is stated in
    the document, with the daemon's own constant."""
    from alpd.domain.conversation.delivery import TEXT_MAX_BYTES
    from alpd.domain.conversation.handoff import SUMMARY_MAX_BYTES
    from alpd.services.history.search import MAX_LIMIT
    from alpd.services.schedules.service import PROMPT_MAX_BYTES
    from alpd.services.threads.pins import MAX_PIN_BYTES

    document = json.loads(CHECKED_IN.read_text())
    by_name = {
        m["name"]: {p["name"]: p["schema"] for p in m["params"]} for m in document["methods"]
    }
    for method, param, limit, error in [
        ("context/pin", "text", MAX_PIN_BYTES, "INVALID_ARGUMENT"),
        ("thread/push", "text", TEXT_MAX_BYTES, "INVALID_ARGUMENT"),
        ("schedule/create", "prompt", PROMPT_MAX_BYTES, "INVALID_ARGUMENT"),
        ("handoff/send", "summary", SUMMARY_MAX_BYTES, "HANDOFF_TOO_LARGE"),
    ]:
        schema = by_name[method][param]
        assert (schema["x-maxBytes"], schema["maxLength"]) == (limit, limit), method
        assert schema["x-error"] == error
    search_limit = by_name["history/search"]["limit"]
    assert (search_limit["minimum"], search_limit["maximum"]) == (1, MAX_LIMIT)
    schedule = next(m for m in document["methods"] if m["name"] == "schedule/create")
    assert schedule["x-exactlyOneOf"] == ["cron", "every", "at"]
    assert {"cron", "every", "at"} <= set(by_name["schedule/create"])
    kinds = ["interactive", "push", "scheduled", "sub-agent", "temp"]
    assert document["components"]["schemas"]["PsDelivery"]["properties"]["kind"]["enum"] == kinds


def test_every_domain_error_is_declared_by_some_method_or_is_a_transport_one() -> None:
    """A name no method declares is either the transport's (2xxx, sent by the connection)
    or dead: it must not be an error a handler sends unannounced."""
    declared = {name for spec in METHODS.values() for name in spec.errors} | set(COMMON_ERRORS)
    #: in the table (names are never removed) but sent by no handler today
    never_sent = {"EXECUTION_NOT_RUNNING"}
    #: raised by the client itself (`alp model fetch` downloads without alpd)
    client_side = {"MODEL_FETCH_FAILED"}
    unannounced = {
        name
        for name, (code, _) in DOMAIN_ERRORS.items()
        if name not in declared | never_sent | client_side and code // 1000 != 2
    }
    assert unannounced == set(), unannounced
