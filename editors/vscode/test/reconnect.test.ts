// The extension's live connection across a real daemon restart (done by
// tests/editors/test_vscode_extension.py when this test writes $ALP_TEST_STEPS/want-restart):
// it says it is disconnected (views show that, not what they last knew), answers requests
// with DISCONNECTED meanwhile, reconnects with back-off, resubscribes, tells the views to
// refresh, and an event after the restart arrives.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { AlpError, socketPath } from "../src/client";
import { LinkState, LiveConnection } from "../src/connection";

const steps = process.env.ALP_TEST_STEPS;

async function step(name: string): Promise<void> {
  assert.ok(steps, "ALP_TEST_STEPS is not set (run through pytest)");
  fs.writeFileSync(path.join(steps, `want-${name}`), name);
  const deadline = Date.now() + 120_000;
  while (!fs.existsSync(path.join(steps, `done-${name}`))) {
    assert.ok(Date.now() < deadline, `the test never did step ${name}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function until<T>(what: string, check: () => T | undefined, timeoutMs = 60_000): Promise<T> {
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + timeoutMs;
    const poll = () => {
      const value = check();
      if (value !== undefined) return resolve(value);
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(poll, 20);
    };
    poll();
  });
}

test("after a daemon restart the live connection reconnects, resubscribes and refreshes", async () => {
  const live = new LiveConnection({ socket: () => socketPath(), firstRetryMs: 100, maxRetryMs: 1000 });
  const states: LinkState[] = [];
  const titles: string[] = [];
  let reconnected = 0;
  live.onState((state) => states.push(state));
  live.onChanged(({ params }) => {
    if (params.thread?.title) titles.push(params.thread.title);
  });
  live.onReconnected(() => reconnected++);
  try {
    const first = await live.get();
    assert.equal(live.state.state, "connected");
    assert.equal(typeof (await first.ping()).pid, "number");

    await step("restart");
    // the loss was noticed; while the daemon is away a view gets a clear error at once
    await until("the disconnected state", () => states.find((s) => s.state === "disconnected"));
    const down = states.find((s) => s.state === "disconnected");
    assert.ok(down && down.state === "disconnected" && down.retryInMs >= 100, JSON.stringify(states));
    await until("reconnection", () => (reconnected > 0 ? true : undefined));
    assert.equal(live.state.state, "connected");
    assert.equal(reconnected, 1);

    // a new client, resubscribed: an event caused after the restart arrives
    const again = await live.get();
    assert.notEqual(again, first);
    await step("after-restart");
    await until("the event after the restart", () => (titles.includes("after the restart") ? true : undefined));

    // the first loss is reported once, then the next tries back off (twice as long each time)
    const waits = states.flatMap((s) => (s.state === "disconnected" ? [s.retryInMs] : []));
    for (let i = 1; i < waits.length; i++) assert.ok(waits[i] >= waits[i - 1], JSON.stringify(waits));
  } finally {
    live.dispose();
  }
});

test("while disconnected, a view's request fails at once with DISCONNECTED", async () => {
  // reached once, then lost (as when a daemon goes away), the next try a minute off
  const live = new LiveConnection({ socket: () => socketPath(), firstRetryMs: 60_000 });
  try {
    const client = await live.get();
    const lost = new Promise<void>((resolve) => live.onState((s) => s.state === "disconnected" && resolve()));
    client.dispose(); // as a daemon going away would
    await lost;
    await assert.rejects(live.get(), (error: unknown) => {
      assert.ok(error instanceof AlpError);
      assert.equal(error.name, "DISCONNECTED");
      assert.match(error.message, /disconnected from alpd .*reconnecting/);
      return true;
    });
  } finally {
    live.dispose();
  }
});
