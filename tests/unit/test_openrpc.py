"""The checked-in OpenRPC document is what the wire types generate, and it is complete."""

from __future__ import annotations

import json
from pathlib import Path

from protocol import openrpc
from protocol.errors import DOMAIN_ERRORS
from protocol.methods import METHODS

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
