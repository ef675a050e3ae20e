// Thread details are Markdown built from text people and agents wrote (titles, pins, recaps,
// summaries): none of it may come out as HTML, a link or an image. Rendered here with
// markdown-it, the parser of VS Code's Markdown preview, with raw HTML and linkify on as
// the preview has them.
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { ThreadShow } from "../src/client";
import { mdCode, threadDetails } from "../src/render";

type MarkdownIt = { render(source: string): string };
const markdownIt = require("markdown-it") as (options: object) => MarkdownIt;
const preview = markdownIt({ html: true, linkify: true });

const HOSTILE = "<img src=x onerror=alert(1)> [link](http://x) ![i](http://x) http://bare.example *b* `c`";

function show(text: string): ThreadShow {
  return {
    thread: {
      id: "thread_1",
      title: text,
      workspace: `/w/${text}`,
      status: "open",
      revision: 2,
      contextRevision: 1,
      updatedAt: "2026-11-30T10:00:00Z",
    },
    roots: [
      {
        id: "exec_1",
        sequence: 1,
        runtime: "command",
        agent: "command",
        kind: "interactive",
        status: "settled",
        outcome: "completed",
        createdAt: "2026-11-30T10:00:00Z",
        summary: text,
      },
    ],
    context: {
      threadId: "thread_1",
      revision: 1,
      digest: "sha256:0",
      snapshot: {
        objective: { text, sourceExecutionId: "exec_1" },
        decisions: [{ text: `${text}\nsecond line ${text}`, sourceExecutionId: "exec_1" }],
      },
    },
    history: { level: "full", entries: 0 },
  };
}

function assertInert(html: string): void {
  assert.ok(!/<img/i.test(html), html);
  assert.ok(!/<a\s/i.test(html), html);
  // only the emphasis the details put there themselves
  assert.ok(!/<em>b<\/em>/i.test(html), html);
}

test("a hostile title, pin, summary and recap are shown as text, never as HTML, links or images", () => {
  for (const recap of [undefined, { threadId: "thread_1", headline: HOSTILE, gist: `${HOSTILE}\n\n${HOSTILE}`, openTasks: [HOSTILE], sourceRevision: 1 }]) {
    const markdown = threadDetails({ ...show(HOSTILE), recap });
    const html = preview.render(markdown);
    assertInert(html);
    // the text itself is all there, literally
    const text = html.replace(/<[^>]*>/g, "").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");
    assert.ok(text.includes(HOSTILE), text);
    // the heading is the title, as text, on one line
    assert.match(html, /^<h1>&lt;img src=x onerror=alert\(1\)&gt; \[link\]\(http:\/\/x\) !\[i\]\(http:\/\/x\)/);
  }
});

test("a multi-line pin stays one item of its section, each of its lines kept", () => {
  const html = preview.render(threadDetails(show("first\nsecond <b>x</b>")));
  assertInert(html);
  assert.ok(!html.includes("<b>"), html);
  const decisions = "<li>first — <code>exec_1</code><br>\nsecond &lt;b&gt;x&lt;/b&gt;<br>\nsecond line first<br>\nsecond &lt;b&gt;x&lt;/b&gt;</li>";
  assert.ok(html.includes(`<h3>Decisions</h3>\n<ul>\n${decisions}\n</ul>`), html);
});

test("a code span holds any text literally", () => {
  assert.equal(mdCode("exec_1"), "`exec_1`");
  assert.equal(preview.render(mdCode("a`b<i>")).trim(), "<p><code>a`b&lt;i&gt;</code></p>");
  assert.equal(preview.render(mdCode("`x`")).trim(), "<p><code>`x`</code></p>");
});
