// Text for the extension's views, from alpd's results. Pure (no `vscode` import).
import { localTime } from "./clock";
import type {
  ContextLine,
  Execution,
  PsJob,
  PsQueued,
  SearchHit,
  Thread,
  ThreadRecap,
  ThreadShow,
} from "./client";

/** Text from the daemon (titles, pins, recaps, summaries, paths: all of it written by people
 *  or agents) as literal Markdown text on one line: every ASCII punctuation character is
 *  backslash-escaped (CommonMark allows it for all of them), so no HTML, link, image,
 *  emphasis, heading or list can come out of it — and no bare URL is linkified, as the
 *  escapes split it; a line break shows as ⏎. */
export function mdText(text: string | null | undefined): string {
  return mdLines(text).join(" ⏎ ");
}

/** The same, a line of Markdown per line of the text (blank lines kept as empty). */
export function mdLines(text: string | null | undefined): string[] {
  return String(text ?? "")
    .split(/\r\n|\r|\n/)
    .map((line) =>
      line
        // other control characters would be dropped or mangled: show them as spaces
        .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ")
        .replace(/[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/g, "\\$&")
        .replace(/\t/g, " "),
    );
}

/** Multi-line text under a list item or in a paragraph: its lines joined by hard breaks
 *  (a backslash at the end of a line), each continuation indented by `indent` spaces so it
 *  stays in its list item; blank lines are left out (they would end the item). */
function mdBlock(text: string | null | undefined, indent = 0, suffix = ""): string {
  const lines = mdLines(text).filter((line, i) => i === 0 || line.trim() !== "");
  lines[0] += suffix;
  return lines.join(`\\\n${" ".repeat(indent)}`);
}

/** Multi-line text as paragraphs: blank lines part them, other line breaks are kept. */
function mdParagraphs(text: string | null | undefined): string[] {
  return String(text ?? "")
    .split(/(?:\r\n|\r|\n)[ \t]*(?:\r\n|\r|\n)/)
    .filter((paragraph) => paragraph.trim() !== "")
    .flatMap((paragraph) => [mdBlock(paragraph), ""]);
}

/** A code span that holds `text` literally (on one line), whatever backticks it has. */
export function mdCode(text: string | null | undefined): string {
  const value = String(text ?? "").replace(/[\u0000-\u001f\u007f]+/g, " ");
  const longest = Math.max(0, ...(value.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  const pad = value.startsWith("`") || value.endsWith("`") ? " " : "";
  return `${fence}${pad}${value}${pad}${fence}`;
}

export const KIND_MARKERS: Record<string, string> = {
  interactive: "⌨",
  push: "⇢",
  scheduled: "⏲",
  "sub-agent": "⑂",
  temp: "…",
};

/** What a thread is called: its recap's headline when alpd has made one (`thread/list` puts
 *  it on the thread, `thread/show` in `recap`), else its title. */
export function headline(thread: Thread, recap?: ThreadRecap | null): string {
  return thread.headline || recap?.headline || thread.title || "(untitled)";
}

/** A thread's tree label: a busy marker, then its headline. */
export function threadLabel(thread: Thread): string {
  return `${thread.busyRoot ? "● " : ""}${headline(thread)}`;
}

export function rootLabel(root: Execution): string {
  const marker = KIND_MARKERS[root.kind] ?? "?";
  return `#${root.sequence ?? "?"} ${marker} ${root.kind} · ${root.runtime}/${root.agent} · ${root.outcome ?? root.status}`;
}

const SECTIONS: [keyof ThreadShow["context"]["snapshot"], string][] = [
  ["objective", "Objective"],
  ["decisions", "Decisions"],
  ["constraints", "Constraints"],
  ["openItems", "Open items"],
  ["nextActions", "Next actions"],
];

function contextLines(show: ThreadShow): string[] {
  const lines: string[] = [];
  for (const [key, title] of SECTIONS) {
    const value = show.context.snapshot[key];
    const items: ContextLine[] = Array.isArray(value) ? value : value ? [value] : [];
    if (items.length === 0) continue;
    lines.push(`### ${title}`, "");
    // a multi-line pin stays one item: its first line carries the source
    for (const item of items) lines.push(`- ${mdBlock(item.text, 2, ` — ${mdCode(item.sourceExecutionId)}`)}`);
    lines.push("");
  }
  return lines.length ? lines : ["_Nothing pinned yet._", ""];
}

/** The gist: the recap's (with its open tasks) when there is one, else the pinned objective
 *  and the last run's summary. */
function gistLines(show: ThreadShow): string[] {
  const recap = show.recap;
  if (recap?.gist) {
    const lines = [
      `## Gist`,
      "",
      `_Recap of context rev ${mdText(String(recap.sourceRevision ?? "?"))}; derived, not authority._`,
      "",
      // the recap is a model's text: shown as text, line for line, never as Markdown
      ...mdParagraphs(recap.gist),
    ];
    const tasks = recap.openTasks ?? [];
    if (tasks.length) lines.push("**Open tasks**", "", ...tasks.map((task) => `- ${mdBlock(task, 2)}`), "");
    return lines;
  }
  const last = show.roots[show.roots.length - 1];
  const objective = show.context.snapshot.objective?.text;
  const lines = ["## Gist", "", objective ? mdBlock(objective) : "_No objective pinned._", ""];
  if (last?.summary) lines.push(`Last run: ${mdBlock(last.summary)}`, "");
  return lines;
}

/** The details of a thread that could not be read: the error, as text. */
export function detailsError(threadId: string, message: string): string {
  return `# ${mdText(threadId)}\n\n${mdText(message)}\n`;
}

/** Thread details as Markdown: header, gist, roots timeline, context with sources. Every
 *  text from the daemon goes through mdText/mdLines/mdCode: none of it is Markdown. */
export function threadDetails(show: ThreadShow): string {
  const { thread, roots, context } = show;
  const lines = [
    `# ${mdText(headline(thread, show.recap))}`,
    "",
    `${mdCode(thread.id)} · ${mdText(thread.status)} · revision ${thread.revision} · context rev ${context.revision} · ${mdText(thread.workspace)}`,
    "",
  ];
  if (thread.busyRoot) lines.push(`**● running** ${mdCode(thread.busyRoot)}`, "");
  lines.push(...gistLines(show));
  lines.push(`## Roots (${roots.length})`, "");
  for (const root of roots) {
    lines.push(`- ${mdText(rootLabel(root))} · ${mdText(localTime(root.startedAt ?? root.createdAt))} · ${mdCode(root.id)}`);
  }
  lines.push("", `## Context (rev ${context.revision}, ${mdCode(context.digest)})`, "", ...contextLines(show));
  lines.push(`History: ${mdText(show.history.level)}, ${show.history.entries ?? 0} entries`, "");
  return lines.join("\n");
}

export function hitLabel(hit: SearchHit): { label: string; description: string; detail: string } {
  const where = hit.sequence != null ? ` #${hit.sequence}` : "";
  return {
    label: hit.threadTitle || hit.threadId || "legacy session",
    description: `${hit.role ?? hit.source}${where}`,
    detail: hit.snippet.replace(/\s+/g, " "),
  };
}

/** Seconds as the CLI prints a duration: 42s, 3m05s, 2h04m. */
export function duration(seconds: number): string {
  const s = Math.floor(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m`;
}

/** A running job of `alp ps`: kind marker, its thread, runtime/agent and kind (a delegated
 *  child is marked └). */
export function jobLabel(job: PsJob): string {
  const marker = KIND_MARKERS[job.kind] ?? "?";
  const title = job.threadTitle || job.threadId || "(legacy)";
  return `${job.parentId ? "└ " : ""}${marker} ${title} · ${job.runtime}/${job.agent} · ${job.kind}`;
}

/** Time so far, tokens and cost so far. */
export function jobDescription(job: PsJob): string {
  const cost = job.costUsd != null ? ` · $${job.costUsd.toFixed(2)}` : "";
  return `${duration(job.elapsedSeconds)} · ${job.tokens ?? 0} tok${cost}`;
}

export function queuedLabel(item: PsQueued): string {
  return `⧗ ${item.threadTitle || item.threadId} · ${item.kind} from ${item.source}`;
}
