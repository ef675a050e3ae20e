// Text for the extension's views, from alpd's results. Pure (no `vscode` import).
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
    for (const item of items) lines.push(`- ${item.text} — \`${item.sourceExecutionId}\``);
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
      `_Recap of context rev ${recap.sourceRevision ?? "?"}; derived, not authority._`,
      "",
      recap.gist,
      "",
    ];
    const tasks = recap.openTasks ?? [];
    if (tasks.length) lines.push("**Open tasks**", "", ...tasks.map((task) => `- ${task}`), "");
    return lines;
  }
  const last = show.roots[show.roots.length - 1];
  const lines = ["## Gist", "", show.context.snapshot.objective?.text ?? "_No objective pinned._", ""];
  if (last?.summary) lines.push(`Last run: ${last.summary}`, "");
  return lines;
}

/** Thread details as Markdown: header, gist, roots timeline, context with sources. */
export function threadDetails(show: ThreadShow): string {
  const { thread, roots, context } = show;
  const lines = [
    `# ${headline(thread, show.recap)}`,
    "",
    `\`${thread.id}\` · ${thread.status} · revision ${thread.revision} · context rev ${context.revision} · ${thread.workspace}`,
    "",
  ];
  if (thread.busyRoot) lines.push(`**● running** \`${thread.busyRoot}\``, "");
  lines.push(...gistLines(show));
  lines.push(`## Roots (${roots.length})`, "");
  for (const root of roots) {
    lines.push(`- ${rootLabel(root)} · ${root.startedAt ?? root.createdAt} · \`${root.id}\``);
  }
  lines.push("", `## Context (rev ${context.revision}, \`${context.digest}\`)`, "", ...contextLines(show));
  lines.push(`History: ${show.history.level}, ${show.history.entries ?? 0} entries`, "");
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
