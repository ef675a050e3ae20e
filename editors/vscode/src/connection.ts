// The extension's one connection to alpd, kept alive: it subscribes to live changes, notices
// when the daemon goes away (a restart, a crash), says so, reconnects with back-off,
// resubscribes and tells the views to refresh. No `vscode` import: tested under plain Node.
import { AlpClient, AlpError, CLIENT_ERROR_CODE, Changed, TranscriptItems } from "./client";

export type LinkState =
  | { state: "connecting" }
  | { state: "connected" }
  | { state: "disconnected"; reason: string; retryInMs: number };

export interface LiveOptions {
  /** the socket (asked again at each attempt: a changed setting takes effect) */
  socket: () => string;
  /** first delay before reconnecting; doubles after each failure … */
  firstRetryMs?: number;
  /** … up to this */
  maxRetryMs?: number;
  /** a request's deadline */
  timeoutMs?: number;
}

type Listener<T> = (value: T) => void;

class Emitter<T> {
  private readonly listeners = new Set<Listener<T>>();
  on(listener: Listener<T>): { dispose(): void } {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  }
  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch {
        // a listener's failure is its own
      }
    }
  }
  clear(): void {
    this.listeners.clear();
  }
}

export class LiveConnection {
  private client: AlpClient | undefined;
  private pending: Promise<AlpClient> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private delay: number;
  private disposed = false;
  /** set once a connection was made: from then on a loss is reconnected by itself */
  private everConnected = false;
  private current: LinkState = { state: "connecting" };

  private readonly changedEmitter = new Emitter<{ method: string; threadId?: string; params: Changed }>();
  private readonly transcriptEmitter = new Emitter<TranscriptItems>();
  private readonly stateEmitter = new Emitter<LinkState>();
  private readonly reconnectedEmitter = new Emitter<void>();

  /** a live notification (thread/changed, execution/changed) */
  readonly onChanged = this.changedEmitter.on.bind(this.changedEmitter);
  /** items a running root wrote (the thread/transcript notification) */
  readonly onTranscript = this.transcriptEmitter.on.bind(this.transcriptEmitter);
  /** connecting / connected / disconnected (with why and when the next try is) */
  readonly onState = this.stateEmitter.on.bind(this.stateEmitter);
  /** connected again after a loss and resubscribed: every view should ask again */
  readonly onReconnected = this.reconnectedEmitter.on.bind(this.reconnectedEmitter);

  constructor(private readonly options: LiveOptions) {
    this.delay = options.firstRetryMs ?? 500;
  }

  get state(): LinkState {
    return this.current;
  }

  private setState(state: LinkState): void {
    this.current = state;
    this.stateEmitter.fire(state);
  }

  /** The connected client; while disconnected, a clear DISCONNECTED error at once (the
   *  reconnection runs on its own timer, never at a view's request). */
  async get(): Promise<AlpClient> {
    if (this.disposed) throw new Error("the alp extension is shutting down");
    if (this.client && !this.client.isClosed) return this.client;
    if (this.current.state === "disconnected" && this.timer) {
      throw new AlpError(
        CLIENT_ERROR_CODE,
        "DISCONNECTED",
        `disconnected from alpd (${this.current.reason}); reconnecting`,
        { retryInMs: this.current.retryInMs },
      );
    }
    return this.connect();
  }

  private connect(): Promise<AlpClient> {
    this.pending ??= (async () => {
      const client = await AlpClient.connect(this.options.socket(), this.options.timeoutMs);
      if (this.options.timeoutMs !== undefined) client.timeoutMs = this.options.timeoutMs;
      try {
        await client.subscribe((method, params) => {
          if (method === "thread/transcript") {
            if (params.threadId && params.items) this.transcriptEmitter.fire(params as TranscriptItems);
            return;
          }
          const threadId = params.thread?.id ?? params.execution?.threadId ?? undefined;
          this.changedEmitter.fire({ method, threadId, params });
        });
      } catch (error) {
        client.dispose();
        throw error;
      }
      if (this.disposed) {
        client.dispose();
        throw new Error("the alp extension is shutting down");
      }
      client.onClose(() => this.lost(client, "the daemon closed the connection"));
      return client;
    })();
    return this.pending.then(
      (client) => {
        this.pending = undefined;
        const again = this.everConnected;
        this.client = client;
        this.everConnected = true;
        this.delay = this.options.firstRetryMs ?? 500;
        this.setState({ state: "connected" });
        if (again) this.reconnectedEmitter.fire();
        return client;
      },
      (error: unknown) => {
        this.pending = undefined;
        // a daemon that was there and is not: keep trying; one never reached: each view's
        // request tries again (and says why), no timer
        if (this.everConnected) this.retry(error instanceof Error ? error.message : String(error));
        throw error;
      },
    );
  }

  private lost(client: AlpClient, reason: string): void {
    if (this.client !== client || this.disposed) return;
    this.client = undefined;
    this.retry(reason);
  }

  private retry(reason: string): void {
    if (this.disposed || this.timer) return;
    const wait = this.delay;
    this.delay = Math.min(this.delay * 2, this.options.maxRetryMs ?? 30_000);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.setState({ state: "connecting" });
      this.connect().catch(() => undefined);
    }, wait);
    this.setState({ state: "disconnected", reason, retryInMs: wait });
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.client?.dispose();
    this.client = undefined;
    this.changedEmitter.clear();
    this.transcriptEmitter.clear();
    this.stateEmitter.clear();
    this.reconnectedEmitter.clear();
  }
}
