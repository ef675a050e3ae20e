// The alpd protocol client: JSON-RPC 2.0 over alpd's Unix socket with LSP framing
// (Content-Length headers, which alpd detects from the first byte), via vscode-jsonrpc.
// No `vscode` import: it runs, and is tested, under plain Node.
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as fs from "node:fs";
import {
  createMessageConnection,
  MessageConnection,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
} from "vscode-jsonrpc/node";

export interface Thread {
  id: string;
  title: string | null;
  workspace: string;
  status: "open" | "closed" | "archived";
  revision: number;
  contextRevision: number;
  busyRoot?: string | null;
  rootCount?: number;
  updatedAt: string;
  /** the recap's headline (derived by alpd's recap model; `thread/list` only) */
  headline?: string | null;
}

export interface Execution {
  id: string;
  threadId?: string | null;
  sequence?: number | null;
  runtime: string;
  agent: string;
  kind: string;
  status: string;
  outcome?: string | null;
  summary?: string | null;
  startedAt?: string | null;
  createdAt: string;
  pid?: number | null;
  costUsd?: number | null;
}

export interface ContextLine {
  id?: string;
  text: string;
  sourceExecutionId: string;
}

export interface ContextResult {
  threadId: string;
  revision: number;
  digest: string;
  snapshot: {
    objective?: ContextLine | null;
    decisions?: ContextLine[];
    constraints?: ContextLine[];
    openItems?: ContextLine[];
    nextActions?: ContextLine[];
  };
}

/** A thread's recap: headline, gist and open tasks kept by a cheap model — derived, never
 *  authority. Absent on a daemon without recaps, and its fields until one was made. */
export interface ThreadRecap {
  threadId: string;
  headline?: string | null;
  gist?: string | null;
  openTasks?: string[];
  sourceRevision?: number | null;
  refreshing?: boolean;
}

export interface ThreadShow {
  thread: Thread;
  roots: Execution[];
  context: ContextResult;
  history: { level: string; entries?: number };
  recap?: ThreadRecap | null;
}

export interface SearchHit {
  source: "entry" | "thread";
  snippet: string;
  score: number;
  threadId?: string | null;
  threadTitle?: string | null;
  executionId?: string | null;
  sequence?: number | null;
  role?: string | null;
}

/** A running root or delegated child, as `daemon/ps` lists it. */
export interface PsJob {
  executionId: string;
  rootId: string;
  kind: string;
  runtime: string;
  agent: string;
  status: string;
  createdAt: string;
  elapsedSeconds: number;
  threadId?: string | null;
  threadTitle?: string | null;
  parentId?: string | null;
  pid?: number | null;
  tokens?: number;
  costUsd?: number | null;
}

/** A push or schedule fire waiting for its thread's running root to settle. */
export interface PsQueued {
  id: number;
  threadId: string;
  threadTitle?: string | null;
  kind: string;
  source: string;
  queuedAt: string;
}

export interface PsSchedule {
  id: string;
  threadId: string;
  threadTitle?: string | null;
  rule: string;
  status: string;
  nextFireAt?: string | null;
}

/** `daemon/ps`: what alp runs now (what `alp ps` prints). */
export interface PsResult {
  daemon: { pid: number; version: string; uptimeSeconds: number; rssBytes: number };
  jobs: PsJob[];
  queued: PsQueued[];
  schedules: PsSchedule[];
  hidden?: number;
  costUsd?: number;
}

export interface Changed {
  thread?: Thread;
  execution?: Execution;
  change: string;
}

/** A domain error of the wire contract: `name` is its symbolic name (THREAD_NOT_FOUND, …). */
export class AlpError extends Error {
  constructor(
    readonly code: number,
    readonly name: string,
    message: string,
    readonly data: unknown,
  ) {
    super(message);
  }
}

/** The socket path, by the same rules as the `alp` CLI: $ALP_SOCKET, else
 *  $XDG_RUNTIME_DIR/alp/alpd.sock (an absolute XDG_RUNTIME_DIR only), else
 *  /tmp/alp-$UID/alpd.sock. An empty variable counts as unset. */
export function socketPath(env: NodeJS.ProcessEnv = process.env, uid: number = os.userInfo().uid): string {
  const explicit = env.ALP_SOCKET;
  if (explicit) {
    const expanded = explicit.startsWith("~") ? path.join(os.homedir(), explicit.slice(1)) : explicit;
    return path.resolve(expanded);
  }
  const runtimeDir = env.XDG_RUNTIME_DIR;
  if (runtimeDir && path.isAbsolute(runtimeDir)) {
    return path.join(runtimeDir, "alp", "alpd.sock");
  }
  return `/tmp/alp-${uid}/alpd.sock`;
}

/** Refuse a socket (or its directory) owned by another user: the CLI checks the daemon's
 *  peer uid, which Node cannot read, so the owner of the files stands in for it. */
function checkOwner(socket: string): void {
  const me = os.userInfo().uid;
  for (const p of [socket, path.dirname(socket)]) {
    let owner: number | undefined;
    try {
      owner = fs.statSync(p).uid;
    } catch {
      continue;
    }
    if (owner !== me) {
      throw new Error(`${p} is owned by uid ${owner}, not you (uid ${me}); refusing to talk to it`);
    }
  }
}

export class AlpClient {
  private constructor(
    readonly socket: string,
    private readonly connection: MessageConnection,
    private readonly stream: net.Socket,
  ) {}

  static async connect(socket: string = socketPath()): Promise<AlpClient> {
    checkOwner(socket);
    const stream = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.createConnection(socket);
      s.once("connect", () => resolve(s));
      s.once("error", (error) =>
        reject(new Error(`no daemon answers on ${socket} (${error.message}); start it with: alpd --socket ${socket}`)),
      );
    });
    const connection = createMessageConnection(new StreamMessageReader(stream), new StreamMessageWriter(stream));
    connection.listen();
    return new AlpClient(socket, connection, stream);
  }

  async request<T>(method: string, params: object = {}): Promise<T> {
    try {
      return (await this.connection.sendRequest(method, params)) as T;
    } catch (error) {
      if (error instanceof ResponseError) {
        const data = error.data as { name?: string } | undefined;
        throw new AlpError(error.code, data?.name ?? `JSONRPC_${error.code}`, error.message, error.data);
      }
      throw error;
    }
  }

  ping(): Promise<{ version: string; protocol: number; pid: number }> {
    return this.request("daemon/ping");
  }

  async listThreads(options: { cwd?: string; all?: boolean } = {}): Promise<Thread[]> {
    const result = await this.request<{ threads: Thread[] }>("thread/list", options);
    return result.threads;
  }

  showThread(threadId: string): Promise<ThreadShow> {
    return this.request("thread/show", { threadId });
  }

  showExecution(executionId: string): Promise<Execution> {
    return this.request("execution/show", { executionId });
  }

  async search(query: string, limit = 50): Promise<SearchHit[]> {
    const result = await this.request<{ hits: SearchHit[] }>("history/search", { query, limit });
    return result.hits;
  }

  /** What runs now (`alp ps`): jobs with their cost so far, the queue, schedules. */
  ps(all = false): Promise<PsResult> {
    return this.request("daemon/ps", { all });
  }

  /** Live changes: `thread/changed` and `execution/changed` notifications go to `listener`. */
  async subscribe(listener: (method: string, params: Changed) => void): Promise<string[]> {
    for (const method of ["thread/changed", "execution/changed"]) {
      this.connection.onNotification(method, (params: Changed) => listener(method, params));
    }
    const result = await this.request<{ subscribed: string[] }>("events/subscribe", {
      events: ["thread/changed", "execution/changed"],
    });
    return result.subscribed;
  }

  onClose(listener: () => void): void {
    this.connection.onClose(listener);
  }

  dispose(): void {
    this.connection.dispose();
    this.stream.destroy();
  }
}
