// Text for the extension's views, from alpd's results. Pure (no `vscode` import).
import type { ContextLine, Execution, SearchHit, Thread, ThreadShow } from "./client";

export const KIND_MARKERS: Record<string, string> = {
  interactive: "⌨",
  push: "⇢",
  scheduled: "⏲",
  "sub-agent": "⑂",
  temp: "…",
};

export function headline(thread: Thread): string {
  return thread.title || "(untitled)";
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

/** Thread details as Markdown: header, gist, roots timeline, context with sources. */
export function threadDetails(show: ThreadShow): string {
  const { thread, roots, context } = show;
  const last = roots[roots.length - 1];
  const lines = [
    `# ${headline(thread)}`,
    "",
    `\`${thread.id}\` · ${thread.status} · revision ${thread.revision} · context rev ${context.revision} · ${thread.workspace}`,
    "",
  ];
  if (thread.busyRoot) lines.push(`**● running** \`${thread.busyRoot}\``, "");
  lines.push("## Gist", "", context.snapshot.objective?.text ?? "_No objective pinned._", "");
  if (last?.summary) lines.push(`Last run: ${last.summary}`, "");
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

export function runningLabel(thread: Thread, execution: Execution): string {
  const marker = KIND_MARKERS[execution.kind] ?? "?";
  return `${marker} ${headline(thread)} · ${execution.runtime}/${execution.agent} · ${execution.kind}`;
}
