// The transcript, diff and memory views' logic under plain Node against a real alpd (seeded
// by tests/editors/test_vscode_views.py, which passes what it made in ALP_TEST_*): paging a
// transcript back to its start, a new root arriving through the live connection, the
// notification's items merged once, a root's diff, a restore asked about and done (forced
// after WORKSPACE_CHANGED, undone), and the memory actions and documents.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { AlpClient, socketPath } from "../src/client";
import { LiveConnection } from "../src/connection";
import { TranscriptView } from "../src/transcript";
import { diffText, memoryLabel, memoryText, restoreFiles, reviewText, transcriptText } from "../src/views";

const env = (name: string): string => {
  const value = process.env[name];
  assert.ok(value, `${name} is not set (run through pytest)`);
  return value;
};

function until<T>(what: string, check: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const poll = async () => {
      const value = await check();
      if (value !== undefined) return resolve(value);
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 50);
    };
    void poll();
  });
}

const file = (name: string): string | null => {
  const at = path.join(env("ALP_TEST_WORK"), name);
  return fs.existsSync(at) ? fs.readFileSync(at, "utf8") : null;
};

test("a transcript opens on its newest page and pages back to the start, each item once", async () => {
  const client = await AlpClient.connect();
  try {
    const threadId = env("ALP_TEST_ADOPTED_ID");
    const everything = await client.transcript(threadId, { after: "", limit: 500 });
    const view = new TranscriptView(threadId, 3);
    await view.load(client);
    assert.equal(view.items.length, 3);
    assert.ok(view.moreBefore && transcriptText(view).includes("… older items above"));
    let pages = 0;
    while (await view.older(client)) pages++;
    assert.equal(pages, Math.ceil(everything.items.length / 3) - 1);
    assert.deepEqual(
      view.shown().map((item) => item.cursor),
      everything.items.map((item) => item.cursor),
    );
    const text = transcriptText(view);
    assert.ok(text.includes("(the start of the thread)"), text);
    assert.match(text, /── root #1 · claude \(claude\) · interactive · completed · .* ──/);
    assert.match(text, / you {2}\S/);
    assert.match(text, / assistant {2}\S/);
    assert.match(text, / ⚙ Bash \{"command":"echo resumed"/);
  } finally {
    client.dispose();
  }
});

test("a notification's items show after the pages' once each, until a page gives them", () => {
  const view = new TranscriptView("thread_1");
  const root = { cursor: "c1", type: "root", text: "root #1 · command (command) · interactive", rootId: "exec_1" };
  view.takeNewest({ threadId: "thread_1", items: [root], roots: [], next: "c1" });
  const said = { cursor: "c2", type: "reply", speaker: "assistant" as const, text: "working on it", at: "2026-12-02T08:41:00Z" };
  view.takeLive({ threadId: "thread_1", items: [said], roots: [] });
  view.takeLive({ threadId: "thread_1", items: [{ ...said, text: "working on it." }], roots: [] });
  assert.deepEqual(view.shown().map((item) => item.text), [root.text, "working on it."]);
  view.takeNewer({ threadId: "thread_1", items: [said, { ...said, cursor: "c3", text: "done" }], roots: [], next: "c3" });
  assert.deepEqual(view.shown().map((item) => item.text), [root.text, "working on it", "done"]);
  assert.equal(view.live.length, 0);
  assert.equal(view.next, "c3");
});

test("a root's diff, and its restore: asked, done, undone, forced after WORKSPACE_CHANGED", async () => {
  const client = await AlpClient.connect();
  try {
    const threadId = env("ALP_TEST_THREAD_ID");
    const text = diffText(await client.diff(threadId));
    assert.ok(text.includes("#   M a.txt  +1 -0") && text.includes("#   A b.txt  +1 -0"), text);
    assert.ok(text.includes("\n+two\n") && text.includes("\n+new\n"), text);

    const asked: string[] = [];
    const yes = async (message: string, detail: string) => {
      asked.push(`${message}\n${detail}`);
      return true;
    };
    const no = async () => false;
    assert.equal(await restoreFiles(client, threadId, 1, no), undefined);
    assert.deepEqual([file("a.txt"), file("b.txt")], ["one\ntwo\n", "new\n"]);
    const done = await restoreFiles(client, threadId, 1, yes);
    assert.ok(done && done.undone === "1");
    assert.ok(asked[0].includes("delete b.txt (created)") && asked[0].includes("write a.txt (modified)"), asked[0]);
    assert.deepEqual([file("a.txt"), file("b.txt")], ["one\n", null]);
    // undo the restore: the root's changes come back
    await restoreFiles(client, threadId, undefined, yes);
    assert.deepEqual([file("a.txt"), file("b.txt")], ["one\ntwo\n", "new\n"]);
    // a change since: asked about (WORKSPACE_CHANGED) before forcing
    fs.appendFileSync(path.join(env("ALP_TEST_WORK"), "a.txt"), "three\n");
    asked.length = 0;
    await restoreFiles(client, threadId, 1, yes);
    assert.ok(asked[0].startsWith("WORKSPACE_CHANGED"), asked[0]);
    assert.deepEqual([file("a.txt"), file("b.txt")], ["one\n", null]);
  } finally {
    client.dispose();
  }
});

test("an open transcript follows a new root through the live connection", async () => {
  const threadId = env("ALP_TEST_THREAD_ID");
  const live = new LiveConnection({ socket: () => socketPath() });
  const other = await AlpClient.connect();
  try {
    const client = await live.get();
    const view = new TranscriptView(threadId);
    await view.load(client);
    assert.ok(!transcriptText(view).includes("root #2"));
    // what the extension does: an event about the thread makes the view read what follows
    live.onChanged(({ threadId: changed }) => {
      if (changed === threadId) void view.catchUp(client);
    });
    await other.request("thread/continue", {
      threadId,
      runtime: "command",
      headless: true,
      prompt: "go",
      args: ["echo", "continued"],
    });
    await until("root #2 in the transcript", () => (transcriptText(view).includes("── root #2 · command") ? true : undefined));
  } finally {
    live.dispose();
    other.dispose();
  }
});

test("memory: listed, a pin promoted, added, superseded, confirmed, retracted, shown, reviewed", async () => {
  const client = await AlpClient.connect();
  try {
    const cwd = env("ALP_TEST_WORK");
    const first = await client.memoryList({ cwd });
    const seeded = first.memories.find((m) => m.id === env("ALP_TEST_MEMORY_ID"));
    assert.ok(seeded, JSON.stringify(first));
    assert.equal(memoryLabel(seeded).label, env("ALP_TEST_MEMORY"));
    assert.match(memoryLabel(seeded).description, /^fact · workspace · confirmed \d{4}-\d{2}-\d{2} \d{2}:\d{2} \S+$/);

    const show = await client.showThread(env("ALP_TEST_THREAD_ID"));
    const pin = show.context.snapshot.decisions?.[0];
    assert.ok(pin?.id);
    const promoted = await client.memoryPromote(env("ALP_TEST_THREAD_ID"), pin.id);
    assert.equal(promoted.text, env("ALP_TEST_DECISION"));
    const cited = memoryText(await client.memoryShow(promoted.id));
    assert.ok(cited.includes("Cites") && cited.includes("planning the ledger"), cited);

    const added = await client.memoryAdd({ text: "run the tests with make check", kind: "convention", scope: "global", cwd });
    await client.memorySupersede(added.id, "run the tests with make test");
    await client.memoryReview({ cwd, confirm: [added.id] });
    await client.memoryRetract(seeded.id);
    const now = await client.memoryList({ cwd });
    assert.deepEqual(now.memories.map((m) => m.text).sort(), [env("ALP_TEST_DECISION"), "run the tests with make test"].sort());
    const text = memoryText(await client.memoryShow(added.id));
    assert.ok(text.includes("Versions (3)") && text.includes("superseded") && text.includes("confirmed"), text);
    assert.ok(text.startsWith("run the tests with make test\n\nconvention · global · active · version 3"), text);
    const review = reviewText(await client.memoryReview({ cwd, days: 90 }), 90);
    assert.ok(review.startsWith("alp memory review: not confirmed for 90 days"), review);
  } finally {
    client.dispose();
  }
});
