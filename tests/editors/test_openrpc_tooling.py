"""The OpenRPC project's own tooling validates and dereferences protocol/openrpc.json."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from protocol import openrpc
from tests.editors.conftest import NODE_MODULES, REPO

DOCUMENT = Path(openrpc.__file__).with_name("openrpc.json")

pytestmark = pytest.mark.editors


def test_schema_utils_validates_and_dereferences_the_document_within_5_s(node: str) -> None:
    done = subprocess.run(
        [node, str(REPO / "tests/node/openrpc_check.cjs"), str(DOCUMENT), str(NODE_MODULES)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["ok"], report
    assert report["methods"] == len(json.loads(DOCUMENT.read_text())["methods"])
    assert report["errorsResolved"]
    assert report["derefMs"] < 5000, report
