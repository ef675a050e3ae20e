"""The OpenRPC document of the wire contract, generated from `protocol.methods` and the
msgspec types, so a client in another language can be written from it alone.

How the document maps the wire (the choices OpenRPC leaves open):
- Params are by name, one content descriptor per field of the method's params Struct
  (camelCase, `required` when the field has no default): exactly the object the server reads.
- Each method's `errors` lists, by `$ref` into `components.errors`, the domain errors it may
  answer with: its own (`MethodSpec.errors`) and those any method may answer with.
- Server → client notifications (sent after `events/subscribe`) are not methods a client
  calls, so they sit in the `x-notifications` extension: one entry per notification method,
  shaped like a method without a result (`name`, `description`, `params`).
- Limits the daemon enforces itself, with a named error, are in the schemas too (they change
  no decoding): a text capped in UTF-8 bytes has `x-maxBytes` (and `x-error`, the error
  above it) and a `maxLength` no larger, a bounded integer `minimum`/`maximum`. A rule over
  several params is an `x-` member of the method: `x-exactlyOneOf` lists params of which a
  call names exactly one (schedule/create: `cron`, `every`, `at`; SCHEDULE_INVALID else).
- Every `$ref` points inside the document (`#/components/...`), so dereferencing needs no
  network, and none is recursive, so it terminates: the OpenRPC tooling expands references
  in place and never returns from a cycle. A type that contains itself (`TreeNode.children`)
  says so with `x-recursive` on an open object schema instead of a `$ref` back to itself.

`python -m protocol.openrpc > protocol/openrpc.json` regenerates the checked-in copy
(`make openrpc`); a test fails when the copy is stale.
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec

from protocol import errors
from protocol.messages import NOTIFICATIONS, PROTOCOL_VERSION
from protocol.methods import COMMON_ERRORS, METHODS

_SCHEMAS = "#/components/schemas/"


def _params(struct_schema: dict[str, Any], components: dict[str, Any]) -> list[dict[str, Any]]:
    """One content descriptor per property of a params Struct, in declaration order."""
    target = components[struct_schema["$ref"].removeprefix(_SCHEMAS)]
    required = set(target.get("required", ()))
    return [
        {"name": name, "required": name in required, "schema": schema}
        for name, schema in target.get("properties", {}).items()
    ]


def _break_cycles(components: dict[str, Any]) -> None:
    """Depth-first over the reference graph: each `$ref` to a schema still being walked (a
    back edge) becomes an open object schema naming it (`x-recursive`), so every chain ends."""
    done: set[str] = set()

    def visit(name: str, walking: tuple[str, ...]) -> None:
        walking = (*walking, name)
        rewrite(components[name], walking)
        done.add(name)

    def rewrite(node: Any, walking: tuple[str, ...]) -> None:
        children = node if isinstance(node, list) else list(node.values())
        for child in children:
            if isinstance(child, list):
                rewrite(child, walking)
            if not isinstance(child, dict):
                continue
            ref = child.get("$ref")
            target = ref.removeprefix(_SCHEMAS) if isinstance(ref, str) else None
            if target is None:
                rewrite(child, walking)
            elif target in walking:
                child.clear()
                child.update(
                    {"type": "object", "description": f"a {target} (nested)", "x-recursive": ref}
                )
            elif target not in done:
                visit(target, walking)

    for name in list(components):
        if name not in done:
            visit(name, ())


#: params of which a call must name exactly one (the daemon answers the error otherwise)
EXACTLY_ONE_OF: dict[str, tuple[tuple[str, ...], str]] = {
    "schedule/create": (("cron", "every", "at"), "SCHEDULE_INVALID"),
}


def _cap_lengths(node: Any) -> None:
    """A byte cap bounds the characters too: `maxLength` is at most `x-maxBytes` (a decode
    bound of the wire type may be looser)."""
    if isinstance(node, dict):
        if "x-maxBytes" in node and node.get("maxLength", node["x-maxBytes"]) > node["x-maxBytes"]:
            node["maxLength"] = node["x-maxBytes"]
        for child in node.values():
            _cap_lengths(child)
    elif isinstance(node, list):
        for child in node:
            _cap_lengths(child)


def _error_refs(names: tuple[str, ...]) -> list[dict[str, str]]:
    ordered = dict.fromkeys((*names, *COMMON_ERRORS))
    return [{"$ref": f"#/components/errors/{name}"} for name in ordered]


def build_document() -> dict[str, Any]:
    types: list[Any] = []
    for spec in METHODS.values():
        types += [spec.params, spec.result]
    types += list(NOTIFICATIONS.values())
    schemas, components = msgspec.json.schema_components(types, ref_template=_SCHEMAS + "{name}")
    _break_cycles(components)
    _cap_lengths(components)
    refs = iter(schemas)
    methods = []
    for name, spec in METHODS.items():
        params_schema, result_schema = next(refs), next(refs)
        method: dict[str, Any] = {
            "name": name,
            "summary": spec.summary,
            "paramStructure": "by-name",
            "params": _params(params_schema, components),
            "result": {"name": "result", "schema": result_schema},
            "errors": _error_refs(spec.errors),
        }
        if name in EXACTLY_ONE_OF:
            names, error = EXACTLY_ONE_OF[name]
            method["x-exactlyOneOf"] = list(names)
            method["description"] = (
                f"exactly one of {', '.join(names)} is given (not null); {error} otherwise"
            )
        methods.append(method)
    notifications = [
        {
            "name": name,
            "description": "server → client notification, sent to subscribers (events/subscribe)",
            "params": _params(next(refs), components),
        }
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
                "carry error.data.name. Notifications are listed in x-notifications."
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
