// The alp extension: Threads (by workspace folder) and Running views, thread details,
// history search, "Continue in terminal", live updates from events/subscribe.
// Everything it knows comes from alpd over the socket (src/client.ts).
import * as vscode from "vscode";
import { AlpError, Execution, PsJob, PsQueued, SearchMode, Thread, socketPath } from "./client";
import { LinkState, LiveConnection } from "./connection";
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
        item.description = `since ${node.item.queuedAt}`;
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

export function activate(context: vscode.ExtensionContext): void {
  const connection = new LiveConnection({
    socket: () => vscode.workspace.getConfiguration("alp").get<string>("socket") || socketPath(),
  });
  const threads = new ThreadsProvider(connection);
  const running = new RunningProvider(connection);
  const details = new DetailsProvider(connection);
  const threadsView = vscode.window.createTreeView("alp.threads", { treeDataProvider: threads });
  const runningView = vscode.window.createTreeView("alp.running", { treeDataProvider: running });
  const refreshAll = () => {
    threads.refresh();
    running.refresh();
    details.updateAll();
  };

  context.subscriptions.push(
    connection,
    threadsView,
    runningView,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, details),
    connection.onChanged(({ threadId }) => {
      threads.refresh();
      running.refresh();
      if (threadId) details.update(threadId);
    }),
    // the daemon went away: every view says so instead of showing what it last knew; once
    // reconnected (and resubscribed), every view asks again
    connection.onState((state) => {
      const message = disconnectedMessage(state);
      threadsView.message = message;
      runningView.message = message;
      if (state.state === "disconnected") refreshAll();
    }),
    connection.onReconnected(refreshAll),
    vscode.commands.registerCommand("alp.refresh", () => {
      threads.refresh();
      running.refresh();
    }),
    vscode.commands.registerCommand("alp.showThread", async (given?: unknown) => {
      let id: string | undefined;
      try {
        id = await pickThread(connection, given);
      } catch (error) {
        showError(error);
        return;
      }
      if (!id) return;
      const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(`${SCHEME}:${id}.md`));
      await vscode.commands.executeCommand("markdown.showPreview", document.uri);
    }),
    vscode.commands.registerCommand("alp.continueInTerminal", async (given?: unknown) => {
      let id: string | undefined;
      try {
        id = await pickThread(connection, given);
      } catch (error) {
        showError(error);
        return;
      }
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
    vscode.commands.registerCommand("alp.search", async () => {
      const query = await vscode.window.showInputBox({ prompt: 'Search history: words, "a phrase", prefix*' });
      if (!query) return;
      try {
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
      } catch (error) {
        showError(error);
      }
    }),
  );
}

export function deactivate(): void {}
