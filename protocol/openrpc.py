"""The OpenRPC document of the wire contract, generated from `protocol.methods` and the
msgspec types, so a client in another language can be written from it alone.

`python -m protocol.openrpc > protocol/openrpc.json` regenerates the checked-in copy
(`make openrpc`); a test fails when the copy is stale.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from protocol import errors
from protocol.messages import NOTIFICATIONS, PROTOCOL_VERSION
from protocol.methods import METHODS


def _ref_template(name: str) -> str:
    return f"#/components/schemas/{name}"


def build_document() -> dict[str, Any]:
    types: list[Any] = []
    for spec in METHODS.values():
        types += [spec.params, spec.result]
    types += list(NOTIFICATIONS.values())
    schemas, components = msgspec.json.schema_components(
        types, ref_template=_ref_template("{name}")
    )
    refs = iter(schemas)
    methods = []
    for name, spec in METHODS.items():
        params_schema, result_schema = next(refs), next(refs)
        methods.append(
            {
                "name": name,
                "summary": spec.summary,
                "paramStructure": "by-name",
                "params": [{"name": "params", "required": True, "schema": params_schema}],
                "result": {"name": "result", "schema": result_schema},
            }
        )
    notifications = [
        {"name": name, "schema": next(refs), "description": "server → client notification"}
        for name in NOTIFICATIONS
    ]
    error_table = {
        name: {"code": code, "message": message, "data": {"name": name}}
        for name, (code, message) in errors.DOMAIN_ERRORS.items()
    }
    return {
        "openrpc": "1.3.2",
        "info": {
            "title": "alpd",
            "version": str(PROTOCOL_VERSION),
            "description": (
                "JSON-RPC 2.0 over a Unix stream socket; framing is NDJSON or LSP "
                "Content-Length headers, chosen by the client's first byte. Domain errors "
                "carry error.data.name."
            ),
        },
        "methods": methods,
        "components": {
            "schemas": components,
            "errors": error_table,
        },
        "x-notifications": notifications,
    }


def render() -> str:
    return msgspec.json.format(msgspec.json.encode(build_document()), indent=2).decode() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
