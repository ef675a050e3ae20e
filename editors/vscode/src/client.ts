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

export type SearchMode = "hybrid" | "keyword" | "meaning";

export interface SearchResult {
  hits: SearchHit[];
  /** what answered (absent: keyword) */
  mode?: SearchMode;
  /** why hybrid answered by keyword alone */
  notice?: string;
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

/** A tool call of a transcript, with its result (`full`: whole, else its first 200
 *  characters). */
export interface TranscriptTool {
  name: string;
  input?: string;
  result?: string | null;
  isError?: boolean;
  callId?: string | null;
  truncated?: boolean;
}

/** One item of a thread's conversation (docs/transcript.md, "Items"). */
export interface TranscriptItem {
  cursor: string;
  type: string;
  rootId?: string | null;
  sequence?: number | null;
  executionId?: string | null;
  at?: string | null;
  speaker?: "person" | "assistant" | "tool" | "system" | "alp";
  text?: string;
  tool?: TranscriptTool | null;
  envelope?: string | null;
  source?: string | null;
  threadId?: string | null;
  labels?: string[];
  status?: string | null;
  model?: string | null;
}

export interface TranscriptRoot {
  id: string;
  sequence: number;
  runtime: string;
  agent: string;
  kind: string;
  status: string;
  outcome?: string | null;
  costUsd?: number | null;
  labels?: string[];
}

/** `thread/transcript`: a page, oldest first. */
export interface TranscriptPage {
  threadId: string;
  items: TranscriptItem[];
  roots: TranscriptRoot[];
  previous?: string | null;
  next?: string;
  moreBefore?: boolean;
  moreAfter?: boolean;
}

/** The `thread/transcript` notification: items written while a root runs. */
export interface TranscriptItems {
  threadId: string;
  items: TranscriptItem[];
  roots: TranscriptRoot[];
}

export interface TranscriptParams {
  before?: string;
  after?: string;
  limit?: number;
  root?: number;
  full?: boolean;
}

export type MemoryKind = "fact" | "convention" | "preference" | "lesson";
export type MemoryScope = "workspace" | "global";

/** A memory as it stands (its newest version). */
export interface Memory {
  id: string;
  kind: MemoryKind;
  scope: MemoryScope;
  text: string;
  status: "active" | "superseded" | "retracted";
  version: number;
  digest: string;
  confirmedAt: string;
  createdAt: string;
  updatedAt: string;
  workspace?: string | null;
  threadId?: string | null;
  filePath?: string | null;
}

export interface MemoryVersion {
  version: number;
  text: string;
  status: string;
  change: string;
  at: string;
  confirmedAt: string;
  digest: string;
}

export interface MemoryShow {
  memory: Memory;
  versions: MemoryVersion[];
  citation: {
    text: string;
    threadId?: string | null;
    threadTitle?: string | null;
    threadExists?: boolean;
    contextRevision?: number | null;
    lineText?: string | null;
  };
}

export interface MemoryList {
  memories: Memory[];
  tampered?: string[];
}

export interface MemoryReview {
  stale: Memory[];
  changed: { memory: Memory; filePath: string; thenSha256?: string | null; nowSha256?: string | null }[];
  confirmed?: Memory[];
}

/** `thread/diff`: what a root (a step) changed in the workspace's files. */
export interface ThreadDiff {
  threadId: string;
  step: string;
  workspace: string;
  files: { path: string; status: string; added?: number | null; deleted?: number | null }[];
  patch?: string;
  patchTruncated?: boolean;
  executionId?: string | null;
  root?: number | null;
  running?: boolean;
  skipped?: { path: string; reason: string; bytes?: number | null }[];
  skippedMore?: number;
}

/** `thread/restore`: what it changed (or, for a dry run, would change). */
export interface ThreadRestore {
  threadId: string;
  undone: string;
  workspace: string;
  changes: { path: string; action: "write" | "delete" | "skip"; why: string }[];
  dryRun?: boolean;
  step?: string | null;
  changesMore?: number;
}

/** The notifications the extension's live connection subscribes to. */
export const EVENTS = ["thread/changed", "execution/changed", "thread/transcript"] as const;

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

/** The code of the errors the client itself raises (REQUEST_TIMEOUT, REQUEST_CANCELLED,
 *  CONNECTION_CLOSED): JSON-RPC's range for implementation-defined server errors is not
 *  ours, so an application code outside every range the wire uses. */
export const CLIENT_ERROR_CODE = -1;

/** A request's deadline when nothing says otherwise. */
export const DEFAULT_TIMEOUT_MS = 15_000;

/** What the client needs of a cancellation token: VS Code's `CancellationToken` is one. */
export interface CancellationTokenLike {
  readonly isCancellationRequested: boolean;
  onCancellationRequested(listener: () => void): { dispose(): void };
}

export interface RequestOptions {
  /** the deadline in ms (0: none); default: the client's `timeoutMs` */
  timeoutMs?: number;
  /** a user's cancellation (a cancelled progress, a closed picker): REQUEST_CANCELLED */
  token?: CancellationTokenLike;
}

function cancelled(method: string): AlpError {
  return new AlpError(CLIENT_ERROR_CODE, "REQUEST_CANCELLED", `${method} was cancelled`, { method });
}

export class AlpClient {
  private closed = false;
  private readonly closeWaiters = new Set<(error: Error) => void>();

  private constructor(
    readonly socket: string,
    private readonly connection: MessageConnection,
    private readonly stream: net.Socket,
  ) {
    const closed = () => {
      if (this.closed) return;
      this.closed = true;
      const error = this.closedError();
      for (const reject of [...this.closeWaiters]) reject(error);
    };
    connection.onClose(closed);
    stream.once("close", closed);
  }

  private closedError(method?: string): AlpError {
    return new AlpError(CLIENT_ERROR_CODE, "CONNECTION_CLOSED", `the connection to alpd on ${this.socket} is closed`, {
      method,
    });
  }

  /** Whether the connection has ended (the daemon went away, or `dispose`). */
  get isClosed(): boolean {
    return this.closed;
  }

  static async connect(socket: string = socketPath(), timeoutMs: number = DEFAULT_TIMEOUT_MS): Promise<AlpClient> {
    checkOwner(socket);
    const stream = await new Promise<net.Socket>((resolve, reject) => {
      const s = net.createConnection(socket);
      const timer = setTimeout(() => {
        s.destroy();
        reject(new Error(`no daemon answers on ${socket} (timed out); start it with: alpd --socket ${socket}`));
      }, timeoutMs);
      s.once("connect", () => {
        clearTimeout(timer);
        resolve(s);
      });
      s.once("error", (error) => {
        clearTimeout(timer);
        reject(new Error(`no daemon answers on ${socket} (${error.message}); start it with: alpd --socket ${socket}`));
      });
    });
    // an error after connecting (a reset by a dying daemon) ends the connection, no more
    stream.on("error", () => undefined);
    const connection = createMessageConnection(new StreamMessageReader(stream), new StreamMessageWriter(stream));
    connection.listen();
    return new AlpClient(socket, connection, stream);
  }

  /** Every request's deadline, unless the call gives its own (`RequestOptions.timeoutMs`). */
  timeoutMs = DEFAULT_TIMEOUT_MS;

  /** A request, bounded by a deadline (REQUEST_TIMEOUT) and, when the caller passes one, a
   *  cancellation token (REQUEST_CANCELLED): either way the promise settles at once and a
   *  late reply is dropped. (alpd has no `$/cancelRequest`: what the daemon was doing for it
   *  finishes there; reads, which is all a cancellable request here is, change nothing.) */
  async request<T>(method: string, params: object = {}, options: RequestOptions = {}): Promise<T> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const token = options.token;
    if (token?.isCancellationRequested) throw cancelled(method);
    const cleanups: (() => void)[] = [];
    const bounded = new Promise<never>((_, reject) => {
      if (timeoutMs > 0) {
        const timer = setTimeout(
          () =>
            reject(
              new AlpError(
                CLIENT_ERROR_CODE,
                "REQUEST_TIMEOUT",
                `alpd did not answer ${method} within ${timeoutMs / 1000} s (on ${this.socket})`,
                { method, timeoutMs },
              ),
            ),
          timeoutMs,
        );
        cleanups.push(() => clearTimeout(timer));
      }
      if (token) {
        const subscription = token.onCancellationRequested(() => reject(cancelled(method)));
        cleanups.push(() => subscription.dispose());
      }
      if (this.closed) reject(this.closedError(method));
      else this.closeWaiters.add(reject);
      cleanups.push(() => this.closeWaiters.delete(reject));
    });
    bounded.catch(() => undefined); // whichever loses the race is nobody's business
    try {
      return (await Promise.race([this.connection.sendRequest(method, params), bounded])) as T;
    } catch (error) {
      if (error instanceof ResponseError) {
        const data = error.data as { name?: string } | undefined;
        throw new AlpError(error.code, data?.name ?? `JSONRPC_${error.code}`, error.message, error.data);
      }
      // vscode-jsonrpc's own "Connection is closed" and the like: say it as the client does
      if (!(error instanceof AlpError) && this.closed) throw this.closedError(method);
      throw error;
    } finally {
      for (const cleanup of cleanups) cleanup();
    }
  }

  ping(): Promise<{ version: string; protocol: number; pid: number }> {
    return this.request("daemon/ping");
  }

  async listThreads(options: { cwd?: string; all?: boolean } = {}, request?: RequestOptions): Promise<Thread[]> {
    const result = await this.request<{ threads: Thread[] }>("thread/list", options, request);
    return result.threads;
  }

  showThread(threadId: string, request?: RequestOptions): Promise<ThreadShow> {
    return this.request("thread/show", { threadId }, request);
  }

  showExecution(executionId: string): Promise<Execution> {
    return this.request("execution/show", { executionId });
  }

  /** `history/search`: by keyword and by meaning (`hybrid`, the daemon's default), or one of
   * them. While the meaning index cannot answer, hybrid answers by keyword and says so in
   * `notice`; `meaning` is then SEARCH_INDEX_NOT_READY. */
  search(query: string, limit = 50, request?: RequestOptions, mode?: SearchMode): Promise<SearchResult> {
    const params: Record<string, unknown> = { query, limit };
    if (mode) params.mode = mode;
    return this.request<SearchResult>("history/search", params, request);
  }

  /** What runs now (`alp ps`): jobs with their cost so far, the queue, schedules. */
  ps(all = false): Promise<PsResult> {
    return this.request("daemon/ps", { all });
  }

  /** A page of a thread's transcript (no cursor: the newest page). */
  transcript(threadId: string, params: TranscriptParams = {}, request?: RequestOptions): Promise<TranscriptPage> {
    return this.request("thread/transcript", { threadId, ...params }, request);
  }

  /** What a root (default: the last step) changed in the files. */
  diff(threadId: string, root?: number, request?: RequestOptions): Promise<ThreadDiff> {
    return this.request("thread/diff", root === undefined ? { threadId } : { threadId, root }, request);
  }

  /** Put the files back to before root `root` (default: undo the last step, a restore too). */
  restore(threadId: string, options: { root?: number; force?: boolean; dryRun?: boolean } = {}): Promise<ThreadRestore> {
    return this.request("thread/restore", { threadId, ...options });
  }

  memoryList(params: { cwd?: string; all?: boolean; retracted?: boolean; query?: string } = {}, request?: RequestOptions): Promise<MemoryList> {
    return this.request("memory/list", params, request);
  }

  memoryShow(id: string, request?: RequestOptions): Promise<MemoryShow> {
    return this.request("memory/show", { id }, request);
  }

  memoryAdd(params: { text: string; kind?: MemoryKind; scope?: MemoryScope; cwd?: string; file?: string }): Promise<Memory> {
    return this.request("memory/add", params);
  }

  /** A pinned line of a thread (its id, or its number) becomes a memory citing it. */
  memoryPromote(thread: string, pin: string, scope?: MemoryScope): Promise<Memory> {
    return this.request("memory/promote", scope ? { thread, pin, scope } : { thread, pin });
  }

  memorySupersede(id: string, text: string): Promise<Memory> {
    return this.request("memory/supersede", { id, text });
  }

  memoryRetract(id: string): Promise<Memory> {
    return this.request("memory/retract", { id });
  }

  /** Stale and changed memories; `confirm`: these are still true (each a new version). */
  memoryReview(params: { cwd?: string; days?: number; confirm?: string[] } = {}, request?: RequestOptions): Promise<MemoryReview> {
    return this.request("memory/review", params, request);
  }

  /** Live changes: `thread/changed`, `execution/changed` and `thread/transcript`
   *  notifications go to `listener`. */
  async subscribe(listener: (method: string, params: Changed & Partial<TranscriptItems>) => void): Promise<string[]> {
    for (const method of EVENTS) {
      this.connection.onNotification(method, (params: Changed & Partial<TranscriptItems>) => listener(method, params));
    }
    const result = await this.request<{ subscribed: string[] }>("events/subscribe", { events: [...EVENTS] });
    return result.subscribed;
  }

  /** `listener` runs once when the connection ends (at once if it has). */
  onClose(listener: () => void): void {
    if (this.closed) {
      listener();
      return;
    }
    const once = () => {
      this.closeWaiters.delete(once);
      listener();
    };
    this.closeWaiters.add(once);
  }

  dispose(): void {
    this.connection.dispose();
    this.stream.destroy();
  }
}
