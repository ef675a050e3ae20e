// A request never waits forever: a deadline ends it with REQUEST_TIMEOUT, a user's
// cancellation with REQUEST_CANCELLED, a closed connection with CONNECTION_CLOSED — against a
// server that accepts and never answers (what a hung daemon looks like).
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { AlpClient, AlpError, CancellationTokenLike } from "../src/client";

async function silentServer(): Promise<{ socket: string; sockets: net.Socket[]; close(): void }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "alp-silent-"));
  const socket = path.join(dir, "alpd.sock");
  const sockets: net.Socket[] = [];
  const server = net.createServer((s) => {
    sockets.push(s);
    s.on("data", () => undefined); // read, never answer
    s.on("error", () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(socket, resolve));
  return {
    socket,
    sockets,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

class Source implements CancellationTokenLike {
  isCancellationRequested = false;
  private readonly listeners: (() => void)[] = [];
  onCancellationRequested(listener: () => void) {
    this.listeners.push(listener);
    return { dispose: () => undefined };
  }
  cancel(): void {
    this.isCancellationRequested = true;
    for (const listener of this.listeners) listener();
  }
}

function named(name: string) {
  return (error: unknown) => {
    assert.ok(error instanceof AlpError, String(error));
    assert.equal(error.name, name);
    return true;
  };
}

test("a request the daemon never answers times out with a clear error", async () => {
  const server = await silentServer();
  const client = await AlpClient.connect(server.socket);
  try {
    client.timeoutMs = 300;
    const started = Date.now();
    await assert.rejects(client.showThread("thread_1"), (error: unknown) => {
      named("REQUEST_TIMEOUT")(error);
      assert.match((error as Error).message, /alpd did not answer thread\/show within 0\.3 s/);
      return true;
    });
    assert.ok(Date.now() - started < 5000);
    // a per-call deadline wins over the client's
    await assert.rejects(client.request("daemon/ping", {}, { timeoutMs: 50 }), named("REQUEST_TIMEOUT"));
  } finally {
    client.dispose();
    server.close();
  }
});

test("a cancelled request ends at once, before or while it waits", async () => {
  const server = await silentServer();
  const client = await AlpClient.connect(server.socket);
  try {
    client.timeoutMs = 60_000;
    const token = new Source();
    const pending = client.search("ledger", 50, { token });
    setTimeout(() => token.cancel(), 50);
    const started = Date.now();
    await assert.rejects(pending, named("REQUEST_CANCELLED"));
    assert.ok(Date.now() - started < 5000);
    await assert.rejects(client.listThreads({ all: true }, { token }), named("REQUEST_CANCELLED"));
  } finally {
    client.dispose();
    server.close();
  }
});

test("a request in flight when the connection closes fails at once", async () => {
  const server = await silentServer();
  const client = await AlpClient.connect(server.socket);
  try {
    client.timeoutMs = 60_000;
    const closed = new Promise<void>((resolve) => client.onClose(resolve));
    const pending = client.showThread("thread_1");
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const s of server.sockets) s.destroy();
    await assert.rejects(pending, named("CONNECTION_CLOSED"));
    await closed;
    assert.ok(client.isClosed);
    await assert.rejects(client.ping(), named("CONNECTION_CLOSED"));
  } finally {
    client.dispose();
    server.close();
  }
});
