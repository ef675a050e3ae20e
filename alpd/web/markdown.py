"""A safe Markdown subset for the conversation view: what an assistant writes, as HTML that
can hold nothing the page did not make. Pure: text in, `Markup` out.

Safe by construction, not by cleaning afterwards: every character of the text is escaped
(markupsafe) before anything else, and the only markup in the result is the fixed set of
tags below, written by this module. An attribute carries either a fixed value, a code
block's language reduced to `[A-Za-z0-9_+-]`, or a link's URL, which must start with
`http://` or `https://` (any other scheme — `javascript:`, `data:` — stays plain text);
its quotes are escaped with the rest.

Blocks, line by line, in the order they are tried:

1. a fence (three or more backticks or tildes, an optional language) opens a code block
   kept verbatim until the same fence closes it or the text ends: `<pre><code>`;
2. `#` to `######` and a space: a heading (`<h4>`, the conversation has its own h1-h3);
3. a line of three or more `-`, `*` or `_` alone: `<hr>`;
4. `- `, `* `, `+ ` items make a `<ul>`, `1. ` items an `<ol>` (one level: indentation is
   kept as text);
5. `> ` lines make a `<blockquote>`;
6. any other run of non-blank lines is a paragraph; its line breaks are kept (`<br>`), as a
   terminal would show them.

Inline, in a paragraph, heading, item or quote: `` `code` `` first (its inside is not read
further), then `[text](http…)` links, `**strong**`, `*emphasis*`. Anything unmatched stays
as the characters it was.
"""

from __future__ import annotations

import re
from typing import Final

from markupsafe import Markup, escape

__all__ = ["ALLOWED_TAGS", "render_markdown"]

#: every tag this module can write
ALLOWED_TAGS: Final = frozenset(
    {"p", "br", "pre", "code", "h4", "hr", "ul", "ol", "li", "blockquote", "a", "strong", "em"}
)

_FENCE: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$")
_HEADING: Final = re.compile(r"^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_RULE: Final = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")
_BULLET: Final = re.compile(r"^ {0,3}[-*+]\s+(.*)$")
_NUMBERED: Final = re.compile(r"^ {0,3}\d{1,9}[.)]\s+(.*)$")
_QUOTE: Final = re.compile(r"^ {0,3}>\s?(.*)$")
_LANGUAGE: Final = re.compile(r"[^A-Za-z0-9_+-]")

_CODE_SPAN: Final = re.compile(r"(`+)(.+?)\1", re.DOTALL)
# over escaped text: `&`, `<`, `>`, `"` and `'` are entities by now, so a URL can hold no quote
_LINK: Final = re.compile(r"\[([^\[\]\n]+)\]\((https?://[^\s()<>]+)\)")
_STRONG: Final = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_EMPHASIS: Final = re.compile(r"(?<![*\w])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![*\w])")


def _emphasised(escaped: str) -> str:
    escaped = _STRONG.sub(r"<strong>\1</strong>", escaped)
    return _EMPHASIS.sub(r"<em>\1</em>", escaped)


def _styled(escaped: str) -> str:
    """Links, then emphasis between and inside them (never across a tag)."""
    parts: list[str] = []
    at = 0
    for found in _LINK.finditer(escaped):
        parts.append(_emphasised(escaped[at : found.start()]))
        label = _emphasised(found.group(1))
        href = found.group(2)
        parts.append(f'<a href="{href}" rel="noopener noreferrer nofollow">{label}</a>')
        at = found.end()
    parts.append(_emphasised(escaped[at:]))
    return "".join(parts)


def _inline(text: str) -> str:
    """One block's text, escaped, with its code spans, links and emphasis."""
    parts: list[str] = []
    at = 0
    for found in _CODE_SPAN.finditer(text):
        parts.append(_styled(str(escape(text[at : found.start()]))))
        parts.append(f"<code>{escape(found.group(2).strip())}</code>")
        at = found.end()
    parts.append(_styled(str(escape(text[at:]))))
    return "".join(parts)


def _code_block(lines: list[str], language: str) -> str:
    shown = _LANGUAGE.sub("", language)[:32]
    attribute = f' class="language-{shown}"' if shown else ""
    return f"<pre><code{attribute}>{escape(chr(10).join(lines))}</code></pre>"


def _list(tag: str, items: list[str]) -> str:
    inner = "".join(f"<li>{_inline(item)}</li>" for item in items)
    return f"<{tag}>{inner}</{tag}>"


def render_markdown(text: str) -> Markup:
    """`text` as the HTML of the subset above (see the module)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    html: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            closing = _closing_fence(fence.group(1))
            body: list[str] = []
            i += 1
            while i < len(lines) and not closing.match(lines[i]):
                body.append(lines[i])
                i += 1
            html.append(_code_block(body, fence.group(2)))
            i += 1
            continue
        if not line.strip():
            i += 1
            continue
        heading = _HEADING.match(line)
        if heading:
            html.append(f"<h4>{_inline(heading.group(1))}</h4>")
            i += 1
            continue
        if _RULE.match(line):
            html.append("<hr>")
            i += 1
            continue
        for pattern, tag in ((_BULLET, "ul"), (_NUMBERED, "ol"), (_QUOTE, "blockquote")):
            if pattern.match(line):
                items: list[str] = []
                while i < len(lines) and (found := pattern.match(lines[i])):
                    items.append(found.group(1))
                    i += 1
                if tag == "blockquote":
                    html.append(
                        f"<blockquote>{'<br>'.join(_inline(q) for q in items)}</blockquote>"
                    )
                else:
                    html.append(_list(tag, items))
                break
        else:
            paragraph: list[str] = []
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                paragraph.append(lines[i])
                i += 1
            html.append(f"<p>{'<br>'.join(_inline(p) for p in paragraph)}</p>")
    return Markup("".join(html))


def _closing_fence(opening: str) -> re.Pattern[str]:
    """What closes a fence: the same character, at least as many times, alone on its line."""
    return re.compile(rf"^ {{0,3}}{re.escape(opening[0])}{{{len(opening)},}}\s*$")


def _starts_block(line: str) -> bool:
    return any(
        pattern.match(line) for pattern in (_FENCE, _HEADING, _RULE, _BULLET, _NUMBERED, _QUOTE)
    )
