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


USE_THE_CLIENT = """\
import { ALP_ERRORS, AlpClient, AlpMethods, AlpNotifications, Thread } from "./alp";

export async function use(client: AlpClient): Promise<string> {
  const thread: Thread = await client.call("thread/create", { title: "t", cwd: "/tmp" });
  const hits = await client.call("history/search", { query: "q", limit: 5 });
  const cancelled = await client.call("execution/cancel", { executionId: "exec_1" });
  // @ts-expect-error: a param the method does not take
  await client.call("daemon/ping", { nope: 1 });
  // @ts-expect-error: a method that does not exist
  await client.call("thread/nope", {});
  // @ts-expect-error: a required param is missing
  await client.call("thread/show", {});
  const settled: AlpMethods["execution/cancel"]["errors"] = "EXECUTION_SETTLED";
  const note: keyof AlpNotifications = "thread/changed";
  return [thread.id, hits.hits.length, cancelled.status, settled, note,
          ALP_ERRORS.FRAME_TOO_LARGE].join(" ");
}
"""


def test_a_typescript_client_generated_from_the_document_compiles(
    node: str, tmp_path: Path
) -> None:
    """@open-rpc/generator's client does not compile (the `/` in method names; 96 tsc errors)
    and is not in the extension's lock; protocol/typescript.py generates the types from the
    same document, and the extension's own `typescript` compiles them under --strict, with a
    file using them that must fail where a wrong call would."""
    from protocol import typescript

    (tmp_path / "alp.ts").write_text(typescript.render())
    (tmp_path / "use.ts").write_text(USE_THE_CLIENT)
    done = subprocess.run(
        [node, str(NODE_MODULES / "typescript" / "bin" / "tsc"), "--strict", "--noEmit",
         "--target", "es2020", "--module", "commonjs",
         str(tmp_path / "alp.ts"), str(tmp_path / "use.ts")],
        capture_output=True,
        text=True,
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
