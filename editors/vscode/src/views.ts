// Text of the transcript, memory and diff documents, from alpd's results. Plain text (the
// documents are not Markdown: nothing people or agents wrote can become markup). Pure (no
// `vscode` import): tested under plain Node.
import { localTime } from "./clock";
import type { AlpClient, Memory, MemoryReview, MemoryShow, ThreadDiff, ThreadRestore, TranscriptItem, TranscriptRoot } from "./client";
import type { TranscriptView } from "./transcript";

/** Characters of a tool's input and of its result on its line (as `alp thread log`). */
export const TOOL_CHARS = 80;

const SPEAKERS: Record<string, string> = { person: "you", assistant: "assistant", tool: "tool", system: "system" };

/** Text on one line: a line break shows as ⏎, other control characters as a space. */
export function oneLine(text: string | null | undefined): string {
  return String(text ?? "")
    .replace(/\r\n|\r|\n/g, " ⏎ ")
    .replace(/[\u0000-\u001f\u007f]/g, " ");
}

function lines(text: string | null | undefined): string[] {
  return String(text ?? "")
    .split(/\r\n|\r|\n/)
    .map((line) => line.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " "));
}

function short(text: string | null | undefined, limit: number): string {
  const flat = oneLine(text);
  const chars = [...flat];
  return chars.length > limit ? `${chars.slice(0, limit - 1).join("")}…` : flat;
}

/** `head` then `text`'s lines, the others under the text's column. */
function block(head: string, text: string | null | undefined): string[] {
  const indent = " ".repeat([...head].length);
  return lines(text).map((line, i) => (i === 0 ? head : indent) + line);
}

/** One item in `alp thread log`'s shape: `HH:MM ZONE speaker  text`, a tool call on one line
 *  (`⚙ name input → result`), markers as `── …`. */
export function itemLines(item: TranscriptItem, roots: Map<string, TranscriptRoot>, full = false): string[] {
  const at = localTime(item.at, true);
  const text = item.text ?? "";
  switch (item.type) {
    case "tool": {
      const tool = item.tool ?? { name: "tool" };
      const limit = full ? Infinity : TOOL_CHARS;
      let line = `${at} ⚙ ${oneLine(tool.name)} ${short(tool.input, limit)}`;
      if (tool.result != null) line += `${tool.isError ? " ✗ " : " → "}${short(tool.result, limit) || "(no output)"}`;
      return [line];
    }
    case "root": {
      const root = item.rootId ? roots.get(item.rootId) : undefined;
      const cost = root?.costUsd != null ? ` · $${root.costUsd.toFixed(4)}` : "";
      const status = item.status ? ` · ${oneLine(item.status)}` : "";
      const labels = item.labels?.length ? `  [${item.labels.join(", ")}]` : "";
      return [`── ${oneLine(text)}${status}${cost} · ${at} ──${labels}`];
    }
    case "clear":
    case "undo":
    case "compaction":
      return [`── ${oneLine(text)} · ${at}`];
    case "prompt":
    case "reply":
    case "error": {
      const who = item.type === "error" ? "error" : (SPEAKERS[item.speaker ?? ""] ?? item.speaker ?? "");
      return block(`${at} ${who}  `, text);
    }
    default: {
      const source = item.source ?? item.threadId ?? "?";
      const label: Record<string, string> = {
        push: `push from ${source}`,
        scheduled: "scheduled",
        "sub-agent": "sub-agent result",
        "handoff-in": `handoff from ${source}`,
        "handoff-out": `handoff to ${source}`,
        report: `report (${item.status ?? "?"})`,
        recap: "recap",
      };
      const out = block(`${at} ${oneLine(label[item.type] ?? item.type)}  `, text);
      if (item.envelope) out.push(`      ${oneLine(item.envelope)}`);
      return out;
    }
  }
}

/** The transcript document. */
export function transcriptText(view: TranscriptView): string {
  const out = [
    `alp transcript  ${view.threadId}${view.full ? "  (full tool text)" : ""}`,
    "Older items: the ↑ button (alp: Transcript: Older Items); new items appear as they are written",
    "",
  ];
  const shown = view.shown();
  out.push(view.moreBefore ? "… older items above: alp: Transcript: Older Items" : shown.length ? "(the start of the thread)" : "(nothing said yet)");
  for (const item of shown) out.push(...itemLines(item, view.roots, view.full));
  return `${out.join("\n")}\n`;
}

/** A memory in the tree: its text; kind, scope, status and when confirmed beside it. */
export function memoryLabel(memory: Memory): { label: string; description: string } {
  return {
    label: oneLine(memory.text),
    description: `${memory.kind} · ${memory.scope}${memory.status === "active" ? "" : ` · ${memory.status}`} · confirmed ${localTime(memory.confirmedAt)}`,
  };
}

/** A memory's document: what it says, its state, its citation, its versions. */
export function memoryText(show: MemoryShow): string {
  const { memory, citation } = show;
  const out = [
    ...lines(memory.text),
    "",
    `${memory.kind} · ${memory.scope} · ${memory.status} · version ${memory.version} · ${memory.id}`,
    `confirmed ${localTime(memory.confirmedAt)}   created ${localTime(memory.createdAt)}   changed ${localTime(memory.updatedAt)}`,
    `workspace ${oneLine(memory.workspace ?? "(global)")}`,
  ];
  if (memory.filePath) out.push(`about the file ${oneLine(memory.filePath)}`);
  out.push("", "Cites", `  ${oneLine(citation.text)}`);
  if (citation.lineText) out.push(`  the line: ${oneLine(citation.lineText)}`);
  if (citation.threadId && !citation.threadExists) out.push("  (that thread is gone: the citation is kept as text)");
  out.push("", `Versions (${show.versions.length})`);
  for (const v of show.versions) {
    out.push(`  v${v.version} ${v.change.padEnd(10)} ${v.status.padEnd(10)} ${localTime(v.at)}  ${oneLine(v.text)}`);
  }
  return `${out.join("\n")}\n`;
}

function memoryLine(memory: Memory): string {
  const { label, description } = memoryLabel(memory);
  return `${label}  (${description}; ${memory.id})`;
}

/** The review document: not confirmed for `days` days, and citing a file that changed. */
export function reviewText(review: MemoryReview, days: number): string {
  const out = [`alp memory review: not confirmed for ${days} days, or citing a changed file`, ""];
  out.push(`Not confirmed for ${days} days (${review.stale.length})`, ...review.stale.map((m) => `  ${memoryLine(m)}`), "");
  out.push(`Their file changed (${review.changed.length})`);
  for (const change of review.changed) {
    out.push(`  ${memoryLine(change.memory)}  ${oneLine(change.filePath)} ${change.nowSha256 ? "changed" : "gone"}`);
  }
  return `${out.join("\n")}\n`;
}

/** The diff document (a `.diff`: VS Code colours it): files, what was left out, the patch. */
export function diffText(diff: ThreadDiff): string {
  const what = diff.root != null ? `root #${diff.root}` : `step ${oneLine(diff.step)}`;
  const out = [
    `# alp diff  ${diff.threadId}  ${what}${diff.running ? "  (running: against the files now)" : ""}`,
    `# workspace ${oneLine(diff.workspace)}`,
    `# files (${diff.files.length})`,
  ];
  for (const file of diff.files) {
    const counts = file.added != null ? `+${file.added} -${file.deleted ?? 0}` : "binary";
    out.push(`#   ${file.status} ${oneLine(file.path)}  ${counts}`);
  }
  const skipped = diff.skipped ?? [];
  if (skipped.length) {
    out.push(`# left out of the checkpoints (${skipped.length + (diff.skippedMore ?? 0)})`);
    for (const file of skipped) out.push(`#   ${oneLine(file.path)}  ${oneLine(file.reason)}`);
  }
  out.push("");
  let text = `${out.join("\n")}\n${diff.patch ?? ""}`;
  if (diff.patchTruncated) text += "# … the patch is cut here (`alp thread diff` prints it whole)\n";
  return text;
}

/** What a restore will do (a dry run's answer): the question and its detail. */
export function restoreQuestion(dry: ThreadRestore): { message: string; detail: string } {
  const detail = dry.changes.map((change) => `${change.action} ${oneLine(change.path)} (${change.why})`);
  if (dry.changesMore) detail.push(`… and ${dry.changesMore} more`);
  if (!dry.changes.length) detail.push("(nothing to change)");
  return { message: `Put the files of ${dry.workspace} back to before step ${dry.undone}?`, detail: detail.join("\n") };
}

/** Asks the person: yes or no (a modal dialog in VS Code). */
export type Ask = (message: string, detail: string) => Promise<boolean>;

/** Put the files back to before `root` (none: undo the last step, a restore included): a
 *  dry run first, whose changes are asked about; if the files changed since the step ended
 *  (WORKSPACE_CHANGED) that is asked about too before forcing. Undefined when the person
 *  said no. */
export async function restoreFiles(client: AlpClient, threadId: string, root: number | undefined, ask: Ask): Promise<ThreadRestore | undefined> {
  const options: { root?: number; force?: boolean; dryRun?: boolean } = root === undefined ? {} : { root };
  let dry: ThreadRestore;
  try {
    dry = await client.restore(threadId, { ...options, dryRun: true });
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name !== "WORKSPACE_CHANGED") throw error;
    const message = (error as Error).message;
    if (!(await ask(`WORKSPACE_CHANGED: ${message}`, "Restore anyway? Those changes are lost (but checkpointed: undo brings them back)."))) return undefined;
    options.force = true;
    dry = await client.restore(threadId, { ...options, dryRun: true });
  }
  const question = restoreQuestion(dry);
  if (!(await ask(question.message, question.detail))) return undefined;
  return client.restore(threadId, options);
}
