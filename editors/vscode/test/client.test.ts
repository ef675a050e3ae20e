// The protocol client under plain Node against a real alpd (started by
// tests/editors/test_vscode_extension.py, which passes what it seeded in ALP_TEST_*).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { AlpClient, AlpError, Changed, ThreadShow, socketPath } from "../src/client";
import { jobDescription, jobLabel, rootLabel, threadDetails, threadLabel } from "../src/render";

const env = (name: string): string => {
  const value = process.env[name];
  assert.ok(value, `${name} is not set (run through pytest)`);
  return value;
};

test("the socket path follows the CLI's rules", () => {
  assert.equal(socketPath(process.env), env("ALP_TEST_EXPECTED_SOCKET"));
  assert.equal(socketPath({ XDG_RUNTIME_DIR: "/run/user/7" }, 7), "/run/user/7/alp/alpd.sock");
  assert.equal(socketPath({ XDG_RUNTIME_DIR: "relative" }, 7), "/tmp/alp-7/alpd.sock");
  assert.equal(socketPath({ ALP_SOCKET: "", XDG_RUNTIME_DIR: "/x" }, 7), "/x/alp/alpd.sock");
});

test("every method the extension uses answers over LSP framing", async () => {
  const client = await AlpClient.connect();
  try {
    assert.equal(typeof (await client.ping()).pid, "number");

    const threads = await client.listThreads({ cwd: env("ALP_TEST_WORK") });
    const seeded = threads.find((t) => t.id === env("ALP_TEST_THREAD_ID"));
    assert.ok(seeded, JSON.stringify(threads));
    assert.equal(threadLabel(seeded), "planning the ledger");

    const show = await client.showThread(seeded.id);
    const details = threadDetails(show);
    assert.match(details, /## Roots \(1\)/);
    assert.ok(details.includes(`- ${env("ALP_TEST_DECISION")} — \`${env("ALP_TEST_EXECUTION_ID")}\``), details);
    assert.match(rootLabel(show.roots[0]), /^#1 ⌨ interactive · command\/command · completed$/);

    const hybrid = await client.search("ledger");
    assert.ok(hybrid.hits.some((h) => h.threadId === seeded.id));
    // no model here: hybrid answers by keyword and says so; keyword does not; meaning refuses
    assert.match(hybrid.notice ?? "", /keyword hits only/);
    const keyword = await client.search("ledger", 50, undefined, "keyword");
    assert.ok(keyword.hits.length > 0 && keyword.notice === undefined);
    await assert.rejects(client.search("ledger", 50, undefined, "meaning"), (error: unknown) => {
      assert.ok(error instanceof AlpError);
      assert.equal(error.name, "SEARCH_INDEX_NOT_READY");
      return true;
    });

    const busyThread = threads.find((t) => t.id === env("ALP_TEST_BUSY_THREAD_ID"));
    assert.ok(busyThread, JSON.stringify(threads));
    assert.equal(threadLabel(busyThread), "● still working");
    const ps = await client.ps();
    const busy = ps.jobs.find((j) => j.threadId === env("ALP_TEST_BUSY_THREAD_ID"));
    assert.ok(busy, JSON.stringify(ps));
    assert.equal(busy.executionId, busyThread.busyRoot);
    assert.equal(jobLabel(busy), "⌨ still working · command/command · interactive");
    assert.match(jobDescription(busy), /^\d+s · 0 tok$/);

    await assert.rejects(client.showThread("thread_nope"), (error: unknown) => {
      assert.ok(error instanceof AlpError);
      assert.equal(error.name, "THREAD_NOT_FOUND");
      return true;
    });
  } finally {
    client.dispose();
  }
});

test("details show the recap's headline, gist and open tasks, else the pinned objective", () => {
  const show: ThreadShow = {
    thread: {
      id: "thread_1",
      title: "the title",
      workspace: "/w",
      status: "open",
      revision: 2,
      contextRevision: 1,
      updatedAt: "2026-11-30T10:00:00Z",
    },
    roots: [],
    context: {
      threadId: "thread_1",
      revision: 1,
      digest: "sha256:0",
      snapshot: { objective: { text: "ship the ledger", sourceExecutionId: "exec_1" } },
    },
    history: { level: "full", entries: 0 },
  };
  for (const without of [show, { ...show, recap: null }]) {
    const details = threadDetails(without);
    assert.match(details, /^# the title\n/);
    assert.ok(details.includes("## Gist\n\nship the ledger\n"), details);
  }
  const recap = threadDetails({
    ...show,
    recap: {
      threadId: "thread_1",
      headline: "Ledger: schema settled",
      gist: "The schema is settled.",
      openTasks: ["write the first migration"],
      sourceRevision: 1,
    },
  });
  // daemon text is escaped Markdown (tests/details.test.ts renders it)
  assert.match(recap, /^# Ledger\\: schema settled\n/);
  assert.ok(recap.includes("_Recap of context rev 1; derived, not authority._\n\nThe schema is settled\\.\n"), recap);
  assert.ok(recap.includes("**Open tasks**\n\n- write the first migration\n"), recap);
  assert.ok(!recap.includes("ship the ledger\n\n## Roots"), recap);
  assert.equal(threadLabel({ ...show.thread, headline: "Ledger", busyRoot: "exec_2" }), "● Ledger");
});

test("a change made elsewhere arrives as a live notification", async () => {
  const watcher = await AlpClient.connect();
  const other = await AlpClient.connect();
  try {
    const seen: Changed[] = [];
    let resolve: () => void = () => undefined;
    const arrived = new Promise<void>((r) => (resolve = r));
    const subscribed = await watcher.subscribe((method, params) => {
      if (method === "thread/changed" && params.thread?.title === "made elsewhere") {
        seen.push(params);
        resolve();
      }
    });
    assert.deepEqual(subscribed.sort(), ["execution/changed", "thread/changed", "thread/transcript"]);
    await other.request("thread/create", { title: "made elsewhere", cwd: env("ALP_TEST_WORK") });
    await arrived;
    assert.equal(seen[0].change, "created");
  } finally {
    watcher.dispose();
    other.dispose();
  }
});
