// The alp extension: Threads (by workspace folder), Running and Memory views, thread
// details, a thread's transcript (live), a root's file diff and restore, memory actions,
// history search, "Continue in terminal", live updates from events/subscribe.
// Everything it knows comes from alpd over the socket (src/client.ts).
import * as vscode from "vscode";
import { localTime } from "./clock";
import {
  AlpError,
  Execution,
  Memory,
  MemoryKind,
  MemoryScope,
  PsJob,
  PsQueued,
  SearchMode,
  Thread,
  TranscriptItems,
  socketPath,
} from "./client";
import { LinkState, LiveConnection } from "./connection";
import { TranscriptView } from "./transcript";
import { diffText, memoryLabel, memoryText, restoreFiles, reviewText, transcriptText } from "./views";
import {
  hitLabel,
  jobDescription,
  jobLabel,
  queuedLabel,
  rootLabel,
  detailsError,
  threadDetails,
  threadLabel,
} from "./render";

const SCHEME = "alp-thread";
/** a thread's transcript: alp-log:<thread>.log */
const LOG_SCHEME = "alp-log";
/** a root's diff: alp-diff:<thread>/<root|last>.diff */
const DIFF_SCHEME = "alp-diff";
/** a memory: alp-memory:<id>.txt; the review: alp-memory:review.txt */
const MEMORY_SCHEME = "alp-memory";
const REVIEW_DAYS = 90;

type Node =
  | { type: "workspace"; folder: string }
  | { type: "thread"; thread: Thread }
  | { type: "root"; root: Execution }
  | { type: "message"; text: string };

type Connection = LiveConnection;

/** What the views say while the daemon is away. */
function disconnectedMessage(state: LinkState): string | undefined {
  if (state.state !== "disconnected") return undefined;
  return `Disconnected from alpd (${state.reason}); reconnecting in ${Math.ceil(state.retryInMs / 1000)} s…`;
}

/** Say what went wrong — unless the person cancelled it themselves. */
function showError(error: unknown): void {
  if (error instanceof AlpError && error.name === "REQUEST_CANCELLED") return;
  void vscode.window.showErrorMessage(`alp: ${describe(error)}`);
}

function describe(error: unknown): string {
  if (error instanceof AlpError) return `${error.name}: ${error.message}`;
  return error instanceof Error ? error.message : String(error);
}

class ThreadsProvider implements vscode.TreeDataProvider<Node> {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly connection: Connection) {}

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    switch (node.type) {
      case "workspace": {
        const item = new vscode.TreeItem(node.folder, vscode.TreeItemCollapsibleState.Expanded);
        item.iconPath = new vscode.ThemeIcon("folder");
        return item;
      }
      case "thread": {
        const item = new vscode.TreeItem(threadLabel(node.thread), vscode.TreeItemCollapsibleState.Collapsed);
        item.description = `${node.thread.status} · rev ${node.thread.revision}`;
        item.tooltip = node.thread.id;
        item.contextValue = "thread";
        item.iconPath = new vscode.ThemeIcon(node.thread.busyRoot ? "sync~spin" : "comment-discussion");
        item.command = { command: "alp.showThread", title: "Show", arguments: [node.thread.id] };
        return item;
      }
      case "root": {
        const item = new vscode.TreeItem(rootLabel(node.root));
        item.tooltip = node.root.summary ?? node.root.id;
        item.contextValue = "root";
        item.command = { command: "alp.showDiff", title: "Show Diff", arguments: [node.root] };
        return item;
      }
      case "message":
        return new vscode.TreeItem(node.text);
    }
  }

  async getChildren(node?: Node): Promise<Node[]> {
    try {
      const client = await this.connection.get();
      if (!node) {
        const folders = vscode.workspace.workspaceFolders ?? [];
        if (folders.length === 0) return [{ type: "message", text: "Open a folder to see its threads" }];
        return folders.map((f) => ({ type: "workspace", folder: f.uri.fsPath }));
      }
      if (node.type === "workspace") {
        const threads = await client.listThreads({ cwd: node.folder });
        if (threads.length === 0) return [{ type: "message", text: "No threads here yet" }];
        return threads.map((thread) => ({ type: "thread", thread }));
      }
      if (node.type === "thread") {
        const show = await client.showThread(node.thread.id);
        return show.roots.map((root) => ({ type: "root", root }));
      }
      return [];
    } catch (error) {
      return [{ type: "message", text: describe(error) }];
    }
  }
}

type PsNode = { type: "job"; job: PsJob } | { type: "queued"; item: PsQueued } | { type: "message"; text: string };

function showThreadCommand(threadId: string | null | undefined): vscode.Command | undefined {
  return threadId ? { command: "alp.showThread", title: "Show", arguments: [threadId] } : undefined;
}

/** The `alp ps` view: running jobs (time, tokens and cost so far), then what is queued. */
class RunningProvider implements vscode.TreeDataProvider<PsNode> {
  private readonly emitter = new vscode.EventEmitter<PsNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly connection: Connection) {}

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getTreeItem(node: PsNode): vscode.TreeItem {
    switch (node.type) {
      case "job": {
        const item = new vscode.TreeItem(jobLabel(node.job));
        item.description = jobDescription(node.job);
        item.tooltip = `${node.job.executionId}${node.job.pid ? ` (pid ${node.job.pid})` : ""}`;
        item.iconPath = new vscode.ThemeIcon("sync~spin");
        item.command = showThreadCommand(node.job.threadId);
        return item;
      }
      case "queued": {
        const item = new vscode.TreeItem(queuedLabel(node.item));
        item.description = `since ${localTime(node.item.queuedAt)}`;
        item.command = showThreadCommand(node.item.threadId);
        return item;
      }
      case "message":
        return new vscode.TreeItem(node.text);
    }
  }

  async getChildren(node?: PsNode): Promise<PsNode[]> {
    if (node) return [];
    try {
      const ps = await (await this.connection.get()).ps();
      const nodes: PsNode[] = [
        ...ps.jobs.map((job): PsNode => ({ type: "job", job })),
        ...ps.queued.map((item): PsNode => ({ type: "queued", item })),
      ];
      return nodes.length ? nodes : [{ type: "message", text: "Nothing is running" }];
    } catch (error) {
      return [{ type: "message", text: describe(error) }];
    }
  }
}

class DetailsProvider implements vscode.TextDocumentContentProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  constructor(private readonly connection: Connection) {}

  update(threadId: string): void {
    this.emitter.fire(vscode.Uri.parse(`${SCHEME}:${threadId}.md`));
  }

  /** Every open details document asks again (after a loss, or once reconnected). */
  updateAll(): void {
    for (const document of vscode.workspace.textDocuments) {
      if (document.uri.scheme === SCHEME) this.emitter.fire(document.uri);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const threadId = uri.path.replace(/\.md$/, "");
    try {
      return threadDetails(await (await this.connection.get()).showThread(threadId, { token }));
    } catch (error) {
      return detailsError(threadId, describe(error));
    }
  }
}

/** Transcript documents: the views' state by thread, read from the daemon and kept live. */
class TranscriptProvider implements vscode.TextDocumentContentProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;
  readonly views = new Map<string, TranscriptView>();

  constructor(private readonly connection: Connection) {}

  static uri(threadId: string): vscode.Uri {
    return vscode.Uri.parse(`${LOG_SCHEME}:${threadId}.log`);
  }

  static threadOf(uri: vscode.Uri): string {
    return uri.path.replace(/\.log$/, "");
  }

  private fire(threadId: string): void {
    this.emitter.fire(TranscriptProvider.uri(threadId));
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const threadId = TranscriptProvider.threadOf(uri);
    let view = this.views.get(threadId);
    try {
      if (!view) {
        view = new TranscriptView(threadId);
        await view.load(await this.connection.get());
        this.views.set(threadId, view);
      }
      return transcriptText(view);
    } catch (error) {
      return `alp transcript  ${threadId}\n\n${describe(error)}\n`;
    }
  }

  /** The older page, above. */
  async older(threadId: string): Promise<void> {
    const view = this.views.get(threadId);
    if (!view) return;
    if (await view.older(await this.connection.get())) this.fire(threadId);
    else void vscode.window.showInformationMessage("alp: this is the start of the thread");
  }

  /** Start over from the newest page (`full`: with whole tool texts, or not). */
  async reload(threadId: string, full?: boolean): Promise<void> {
    const view = new TranscriptView(threadId);
    view.full = full ?? this.views.get(threadId)?.full ?? false;
    await view.load(await this.connection.get());
    this.views.set(threadId, view);
    this.fire(threadId);
  }

  /** The thread (or, with none, every open transcript) changed: read what follows. */
  async catchUp(threadId?: string): Promise<void> {
    for (const [id, view] of this.views) {
      if (threadId && id !== threadId) continue;
      try {
        await view.catchUp(await this.connection.get());
        this.fire(id);
      } catch {
        // the next event, or the reconnection, asks again
      }
    }
  }

  live(notification: TranscriptItems): void {
    const view = this.views.get(notification.threadId);
    if (!view) return;
    view.takeLive(notification);
    this.fire(notification.threadId);
  }

  /** A closed document's view is dropped. */
  forget(uri: vscode.Uri): void {
    if (uri.scheme === LOG_SCHEME) this.views.delete(TranscriptProvider.threadOf(uri));
  }
}

/** Diff documents (`.diff`, coloured by VS Code), asked again when their thread changes. */
class DiffProvider implements vscode.TextDocumentContentProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  constructor(private readonly connection: Connection) {}

  static uri(threadId: string, root?: number | null): vscode.Uri {
    return vscode.Uri.parse(`${DIFF_SCHEME}:${threadId}/${root ?? "last"}.diff`);
  }

  static parse(uri: vscode.Uri): { threadId: string; root?: number } {
    const [threadId, step] = uri.path.replace(/\.diff$/, "").split("/");
    return { threadId, root: step === "last" ? undefined : Number(step) };
  }

  update(threadId?: string): void {
    for (const document of vscode.workspace.textDocuments) {
      if (document.uri.scheme !== DIFF_SCHEME) continue;
      if (!threadId || DiffProvider.parse(document.uri).threadId === threadId) this.emitter.fire(document.uri);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const { threadId, root } = DiffProvider.parse(uri);
    try {
      return diffText(await (await this.connection.get()).diff(threadId, root, { token }));
    } catch (error) {
      return `# alp diff  ${threadId}\n# ${describe(error)}\n`;
    }
  }
}

/** Memory documents: one memory (versions, citation), or the review. */
class MemoryProvider implements vscode.TextDocumentContentProvider {
  private readonly emitter = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.emitter.event;

  constructor(private readonly connection: Connection) {}

  updateAll(): void {
    for (const document of vscode.workspace.textDocuments) {
      if (document.uri.scheme === MEMORY_SCHEME) this.emitter.fire(document.uri);
    }
  }

  async provideTextDocumentContent(uri: vscode.Uri, token: vscode.CancellationToken): Promise<string> {
    const id = uri.path.replace(/\.txt$/, "");
    try {
      const client = await this.connection.get();
      if (id === "review") {
        const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
        return reviewText(await client.memoryReview({ cwd, days: REVIEW_DAYS }, { token }), REVIEW_DAYS);
      }
      return memoryText(await client.memoryShow(id, { token }));
    } catch (error) {
      return `alp memory  ${id}\n\n${describe(error)}\n`;
    }
  }
}

type MemoryNode = { type: "memory"; memory: Memory } | { type: "message"; text: string };

/** The Memory view: this workspace's memories and the global ones. */
class MemoryTreeProvider implements vscode.TreeDataProvider<MemoryNode> {
  private readonly emitter = new vscode.EventEmitter<MemoryNode | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;

  constructor(private readonly connection: Connection) {}

  refresh(): void {
    this.emitter.fire(undefined);
  }

  getTreeItem(node: MemoryNode): vscode.TreeItem {
    if (node.type === "message") return new vscode.TreeItem(node.text);
    const { label, description } = memoryLabel(node.memory);
    const item = new vscode.TreeItem(label);
    item.description = description;
    item.tooltip = `${node.memory.id}\n${node.memory.text}`;
    item.contextValue = "memory";
    item.iconPath = new vscode.ThemeIcon(node.memory.scope === "global" ? "globe" : "bookmark");
    item.command = { command: "alp.memoryShow", title: "Show", arguments: [node] };
    return item;
  }

  async getChildren(node?: MemoryNode): Promise<MemoryNode[]> {
    if (node) return [];
    try {
      const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
      const result = await (await this.connection.get()).memoryList(cwd ? { cwd } : {});
      const nodes: MemoryNode[] = result.memories.map((memory) => ({ type: "memory", memory }));
      if (result.tampered?.length) nodes.push({ type: "message", text: `left out (MEMORY_TAMPERED): ${result.tampered.join(", ")}` });
      return nodes.length ? nodes : [{ type: "message", text: "No memories yet: alp: Remember…" }];
    } catch (error) {
      return [{ type: "message", text: describe(error) }];
    }
  }
}

/** A modal yes/no question. */
async function ask(message: string, detail: string): Promise<boolean> {
  const yes = "Yes";
  return (await vscode.window.showWarningMessage(message, { modal: true, detail }, yes)) === yes;
}

function memoryIdOf(given: unknown): string | undefined {
  if (typeof given === "string") return given;
  if (given && typeof given === "object" && "memory" in given) return (given as { memory: Memory }).memory.id;
  const active = vscode.window.activeTextEditor?.document.uri;
  if (active?.scheme === MEMORY_SCHEME && active.path !== "review.txt") return active.path.replace(/\.txt$/, "");
  return undefined;
}

async function pickMemory(connection: Connection, given: unknown): Promise<Memory | undefined> {
  const id = memoryIdOf(given);
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const { memories } = await (await connection.get()).memoryList(cwd ? { cwd } : {});
  if (id) return memories.find((m) => m.id === id) ?? (await (await connection.get()).memoryShow(id)).memory;
  const picked = await vscode.window.showQuickPick(
    memories.map((memory) => ({ ...memoryLabel(memory), memory })),
    { placeHolder: "Memory" },
  );
  return picked?.memory;
}

/** A request a person waits for: a cancellable progress notification, whose cancel (or the
 *  client's deadline) ends the wait with a clear error. */
function withCancellableProgress<T>(
  title: string,
  work: (token: vscode.CancellationToken) => Promise<T>,
): Thenable<T> {
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title, cancellable: true },
    (_progress, token) => work(token),
  );
}

async function pickThread(connection: Connection, given?: unknown): Promise<string | undefined> {
  if (typeof given === "string") return given;
  if (given && typeof given === "object" && "thread" in given) return (given as { thread: Thread }).thread.id;
  const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const threads = await withCancellableProgress("alp: listing threads", async (token) =>
    (await connection.get()).listThreads(cwd ? { cwd } : { all: true }, { token }),
  );
  const picked = await vscode.window.showQuickPick(
    threads.map((t) => ({ label: threadLabel(t), description: t.id, id: t.id })),
    { placeHolder: "Thread" },
  );
  return picked?.id;
}

/** A command whose failure is shown to the person, by name (not left in VS Code's log). */
function command(name: string, run: (given?: unknown) => Promise<unknown>): vscode.Disposable {
  return vscode.commands.registerCommand(name, async (given?: unknown) => {
    try {
      await run(given);
    } catch (error) {
      showError(error);
    }
  });
}

export function activate(context: vscode.ExtensionContext): void {
  const connection = new LiveConnection({
    socket: () => vscode.workspace.getConfiguration("alp").get<string>("socket") || socketPath(),
  });
  const threads = new ThreadsProvider(connection);
  const running = new RunningProvider(connection);
  const details = new DetailsProvider(connection);
  const transcripts = new TranscriptProvider(connection);
  const diffs = new DiffProvider(connection);
  const memories = new MemoryProvider(connection);
  const memoryTree = new MemoryTreeProvider(connection);
  const threadsView = vscode.window.createTreeView("alp.threads", { treeDataProvider: threads });
  const runningView = vscode.window.createTreeView("alp.running", { treeDataProvider: running });
  const memoryView = vscode.window.createTreeView("alp.memory", { treeDataProvider: memoryTree });
  const refreshAll = () => {
    threads.refresh();
    running.refresh();
    details.updateAll();
    diffs.update();
    memoryTree.refresh();
    memories.updateAll();
    void transcripts.catchUp();
  };
  const memoryChanged = () => {
    memoryTree.refresh();
    memories.updateAll();
  };
  const openText = async (uri: vscode.Uri) => {
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: false });
  };
  const cwd = () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const logThreadOf = (given: unknown): string | undefined => {
    const active = vscode.window.activeTextEditor?.document.uri;
    if (given instanceof vscode.Uri && given.scheme === LOG_SCHEME) return TranscriptProvider.threadOf(given);
    return active?.scheme === LOG_SCHEME ? TranscriptProvider.threadOf(active) : undefined;
  };
  const diffOf = (given: unknown): { threadId: string; root?: number } | undefined => {
    if (given instanceof vscode.Uri && given.scheme === DIFF_SCHEME) return DiffProvider.parse(given);
    if (given && typeof given === "object" && "threadId" in given && "kind" in given) {
      const root = given as Execution;
      if (root.threadId) return { threadId: root.threadId, root: root.sequence ?? undefined };
    }
    const active = vscode.window.activeTextEditor?.document.uri;
    return active?.scheme === DIFF_SCHEME ? DiffProvider.parse(active) : undefined;
  };

  context.subscriptions.push(
    connection,
    threadsView,
    runningView,
    memoryView,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, details),
    vscode.workspace.registerTextDocumentContentProvider(LOG_SCHEME, transcripts),
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, diffs),
    vscode.workspace.registerTextDocumentContentProvider(MEMORY_SCHEME, memories),
    vscode.workspace.onDidCloseTextDocument((document) => transcripts.forget(document.uri)),
    connection.onChanged(({ threadId }) => {
      threads.refresh();
      running.refresh();
      if (threadId) {
        details.update(threadId);
        diffs.update(threadId);
        void transcripts.catchUp(threadId);
      }
    }),
    connection.onTranscript((notification) => transcripts.live(notification)),
    // the daemon went away: every view says so instead of showing what it last knew; once
    // reconnected (and resubscribed), every view asks again
    connection.onState((state) => {
      const message = disconnectedMessage(state);
      threadsView.message = message;
      runningView.message = message;
      memoryView.message = message;
      if (state.state === "disconnected") refreshAll();
    }),
    connection.onReconnected(refreshAll),
    vscode.commands.registerCommand("alp.refresh", () => {
      threads.refresh();
      running.refresh();
      memoryTree.refresh();
    }),
    command("alp.showThread", async (given) => {
      const id = await pickThread(connection, given);
      if (!id) return;
      const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(`${SCHEME}:${id}.md`));
      await vscode.commands.executeCommand("markdown.showPreview", document.uri);
    }),
    command("alp.continueInTerminal", async (given) => {
      const id = await pickThread(connection, given);
      if (!id) return;
      const command = vscode.workspace.getConfiguration("alp").get<string>("command") || "alp";
      const terminal = vscode.window.createTerminal({
        name: `alp ${id}`,
        shellPath: command,
        shellArgs: ["thread", "continue", id],
        cwd: vscode.workspace.workspaceFolders?.[0]?.uri,
      });
      terminal.show();
    }),
    command("alp.showTranscript", async (given) => {
      const id = await pickThread(connection, given);
      if (id) await openText(TranscriptProvider.uri(id));
    }),
    command("alp.transcriptOlder", async (given) => {
      const id = logThreadOf(given);
      if (id) await transcripts.older(id);
    }),
    command("alp.transcriptFull", async (given) => {
      const id = logThreadOf(given);
      if (id) await transcripts.reload(id, !transcripts.views.get(id)?.full);
    }),
    command("alp.showDiff", async (given) => {
      const target = diffOf(given);
      if (target) return openText(DiffProvider.uri(target.threadId, target.root));
      const id = await pickThread(connection, given);
      if (id) await openText(DiffProvider.uri(id));
    }),
    command("alp.restoreFiles", async (given) => {
      const target: { threadId?: string; root?: number } = diffOf(given) ?? { threadId: await pickThread(connection, given) };
      if (!target.threadId) return;
      const done = await restoreFiles(await connection.get(), target.threadId, target.root, ask);
      if (done) {
        void vscode.window.showInformationMessage(
          `alp: put ${done.changes.length} files back to before step ${done.undone}; "alp: Undo Files of the Last Step" takes it back`,
        );
        diffs.update(target.threadId);
      }
    }),
    command("alp.undoFiles", async (given) => {
      const threadId = diffOf(given)?.threadId ?? (await pickThread(connection, given));
      if (!threadId) return;
      const done = await restoreFiles(await connection.get(), threadId, undefined, ask);
      if (done) {
        void vscode.window.showInformationMessage(`alp: undid the files of step ${done.undone}`);
        diffs.update(threadId);
      }
    }),
    command("alp.memoryShow", async (given) => {
      const memory = await pickMemory(connection, given);
      if (memory) await openText(vscode.Uri.parse(`${MEMORY_SCHEME}:${memory.id}.txt`));
    }),
    command("alp.memoryAdd", async () => {
      const text = await vscode.window.showInputBox({ prompt: "Remember (one statement, at most 500 characters)" });
      if (!text) return;
      const kind = await vscode.window.showQuickPick(["fact", "convention", "preference", "lesson"], { placeHolder: "Kind" });
      if (!kind) return;
      const scope = await vscode.window.showQuickPick(["workspace", "global"], { placeHolder: "Scope" });
      if (!scope) return;
      const added = await (await connection.get()).memoryAdd({ text, kind: kind as MemoryKind, scope: scope as MemoryScope, cwd: cwd() });
      void vscode.window.showInformationMessage(`alp: remembered ${added.id}`);
      memoryChanged();
    }),
    command("alp.memoryPromote", async (given) => {
      const threadId = await pickThread(connection, given);
      if (!threadId) return;
      const show = await (await connection.get()).showThread(threadId);
      const pins = Object.values(show.context.snapshot).flatMap((value) => (Array.isArray(value) ? value : value ? [value] : []));
      const picked = await vscode.window.showQuickPick(
        pins.filter((pin) => pin.id).map((pin) => ({ label: pin.text.replace(/\s+/g, " "), description: pin.id, id: pin.id as string })),
        { placeHolder: "The pinned line to remember" },
      );
      if (!picked) return;
      const promoted = await (await connection.get()).memoryPromote(threadId, picked.id);
      void vscode.window.showInformationMessage(`alp: remembered ${promoted.id}, citing the pin`);
      memoryChanged();
    }),
    command("alp.memorySupersede", async (given) => {
      const memory = await pickMemory(connection, given);
      if (!memory) return;
      const text = await vscode.window.showInputBox({ prompt: `New text of ${memory.id}`, value: memory.text });
      if (!text) return;
      const now = await (await connection.get()).memorySupersede(memory.id, text);
      void vscode.window.showInformationMessage(`alp: ${memory.id} is now version ${now.version}`);
      memoryChanged();
    }),
    command("alp.memoryRetract", async (given) => {
      const memory = await pickMemory(connection, given);
      if (!memory || !(await ask(`Retract ${memory.id}?`, `${memory.text}\n\nIt never reaches a run again.`))) return;
      await (await connection.get()).memoryRetract(memory.id);
      memoryChanged();
    }),
    command("alp.memoryConfirm", async (given) => {
      const memory = await pickMemory(connection, given);
      if (!memory) return;
      await (await connection.get()).memoryReview({ cwd: cwd(), confirm: [memory.id] });
      void vscode.window.showInformationMessage(`alp: confirmed ${memory.id}`);
      memoryChanged();
    }),
    vscode.commands.registerCommand("alp.memoryReview", () => openText(vscode.Uri.parse(`${MEMORY_SCHEME}:review.txt`))),
    command("alp.search", async () => {
      const query = await vscode.window.showInputBox({ prompt: 'Search history: words, "a phrase", prefix*' });
      if (!query) return;
      const mode = vscode.workspace.getConfiguration("alp").get<SearchMode>("searchMode") || "hybrid";
      const result = await withCancellableProgress(`alp: searching for ${query}`, async (token) =>
        (await connection.get()).search(query, 50, { token }, mode),
      );
      if (result.notice) void vscode.window.showWarningMessage(`alp: ${result.notice}`);
      const hits = result.hits;
      const picked = await vscode.window.showQuickPick(
        hits.map((hit) => ({ ...hitLabel(hit), threadId: hit.threadId })),
        { placeHolder: `${hits.length} matches (${result.mode ?? "keyword"})`, matchOnDetail: true },
      );
      if (picked?.threadId) await vscode.commands.executeCommand("alp.showThread", picked.threadId);
    }),
  );
}

export function deactivate(): void {}
