// A thread's conversation (the thread page's #transcript): older pages right after it opens
// until it holds HELD items, then when scrolled to the top; new items when the daemon says
// something happened in the thread, a tool call's whole text on request, and the composer's
// continue / push without leaving the page. The items older reads place are in the document
// but not laid out while out of view (`lazy`, alp.css), so a thousand of them cost little.
// Every item is rendered by alpd (GET /t/ID/transcript, the same markup as the page's): this
// script only places the list items it is given. No inline script: the page's CSP forbids it.
"use strict";

(function () {
  const scroller = document.getElementById("transcript-scroll");
  const list = document.getElementById("transcript");
  const composer = document.getElementById("composer");
  if (!scroller || !list) return;
  const endpoint = "/t/" + encodeURIComponent(scroller.dataset.thread) + "/transcript";
  const older = document.getElementById("older");
  // px from the top at which the older page is asked for
  const OLDER_AT = 300;
  // items an older read asks for (the most one read of thread/transcript gives)
  const OLDER_LIMIT = 500;
  // items the view holds without being scrolled: after it opens, older pages are read until
  // it holds this many or reaches the start (further back, when scrolled near the top)
  const HELD = 1000;
  // newer pages read after one notification, at most (the next one reads on)
  const NEWER_PAGES = 5;
  // ms between reads of the tail while a tool call of a running root waits for its result:
  // the result's entry alone brings no notification (its item is the call's, sent before)
  const PENDING_POLL_MS = 2000;

  function count(name) {
    list.dataset[name] = String(Number(list.dataset[name] || 0) + 1);
  }

  function atBottom() {
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 48;
  }

  function toBottom() {
    scroller.scrollTop = scroller.scrollHeight;
  }

  function byCursor(cursor) {
    return list.querySelector('li[data-cursor="' + CSS.escape(cursor) + '"]');
  }

  function note(where, text) {
    const p = document.createElement("span");
    p.className = "error";
    p.setAttribute("role", "alert");
    p.textContent = text;
    where.replaceChildren(p);
  }

  // One page: the <ol id="page"> of the answer, or an Error with the daemon's error line.
  async function fetchPage(params) {
    const response = await fetch(endpoint + "?" + new URLSearchParams(params), {
      credentials: "same-origin",
    });
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    if (!response.ok) {
      const alert = doc.querySelector("[role=alert]");
      throw new Error(alert ? alert.textContent.trim() : "HTTP " + response.status);
    }
    updateRootStates(doc);
    return doc.getElementById("page");
  }

  // A root marker says its root's state; a page read (or the page's own refresh) brings it.
  function updateRootStates(doc) {
    for (const state of doc.querySelectorAll("#root-states li[data-root]")) {
      const selector = '.root-status[data-root="' + CSS.escape(state.dataset.root) + '"]';
      for (const span of list.querySelectorAll(selector)) span.textContent = state.textContent;
    }
  }

  // One older page placed above what is held, what was in view staying in view: true when
  // it was placed. One read at a time: a second ask while one is on its way gets that one.
  let olderRead = null;
  function loadOlder() {
    if (olderRead === null && list.dataset.moreBefore) {
      olderRead = readOlder().finally(function () {
        olderRead = null;
      });
    }
    return olderRead || Promise.resolve(false);
  }

  async function readOlder() {
    const held = list.children.length;
    const limit = held < HELD ? Math.min(OLDER_LIMIT, HELD - held) : OLDER_LIMIT;
    try {
      const page = await fetchPage({ before: list.dataset.previous, limit: String(limit) });
      const height = scroller.scrollHeight;
      const top = scroller.scrollTop;
      const have = new Set(Array.from(list.children, (li) => li.dataset.cursor));
      const fragment = document.createDocumentFragment();
      for (const li of Array.from(page.children)) {
        if (have.has(li.dataset.cursor)) continue;
        li.classList.add("lazy");
        fragment.appendChild(document.adoptNode(li));
      }
      list.insertBefore(fragment, list.firstChild);
      list.dataset.previous = page.dataset.previous;
      list.dataset.moreBefore = page.dataset.moreBefore;
      // what was in view stays in view
      scroller.scrollTop = top + (scroller.scrollHeight - height);
      if (!list.dataset.moreBefore && older) {
        const start = document.createElement("span");
        start.className = "meta";
        start.textContent = "The start of the thread.";
        older.replaceChildren(start);
      }
      count("older");
      return true;
    } catch (error) {
      if (older) note(older, error.message);
      return false;
    }
  }

  // Older pages while the view holds fewer than HELD items, does not fill its box, or is
  // scrolled near its top: right after it opens, and on each scroll.
  async function fillOlder() {
    while (
      list.dataset.moreBefore &&
      (list.children.length < HELD ||
        scroller.scrollHeight <= scroller.clientHeight ||
        scroller.scrollTop < OLDER_AT)
    ) {
      if (!(await loadOlder())) return;
    }
  }

  let newerTimer = null;
  let newerRunning = false;
  let newerAgain = false;
  let pendingTimer = null;
  function newerSoon() {
    if (newerTimer === null) newerTimer = setTimeout(loadNewer, 100);
  }

  function watchPendingCalls() {
    if (pendingTimer !== null || !list.querySelector("li.type-tool[data-provisional]")) return;
    pendingTimer = setTimeout(function () {
      pendingTimer = null;
      newerSoon();
    }, PENDING_POLL_MS);
  }

  // What came since the last item; and, from the first provisional item on (a tool call
  // waiting for its result, a queued delivery, the recap), the tail read again, since those
  // may have changed or moved.
  async function loadNewer() {
    newerTimer = null;
    if (newerRunning) {
      newerAgain = true;
      return;
    }
    newerRunning = true;
    try {
      const stick = atBottom();
      let anchor = list.dataset.next || "";
      let replaceFrom = list.querySelector("li[data-provisional]");
      if (replaceFrom && replaceFrom.previousElementSibling) {
        anchor = replaceFrom.previousElementSibling.dataset.cursor;
      } else {
        replaceFrom = null;
      }
      const fresh = [];
      for (let pages = 0; pages < NEWER_PAGES; pages++) {
        const page = await fetchPage({ after: anchor });
        fresh.push(...Array.from(page.children));
        anchor = page.dataset.next;
        if (!page.dataset.moreAfter) break;
      }
      while (replaceFrom) {
        const next = replaceFrom.nextElementSibling;
        replaceFrom.remove();
        replaceFrom = next;
      }
      for (const li of fresh) {
        const node = document.importNode(li, true);
        const old = byCursor(li.dataset.cursor);
        if (old) old.replaceWith(node);
        else list.appendChild(node);
      }
      list.dataset.next = anchor;
      if (stick) toBottom();
      count("updates");
    } catch (error) {
      if (older) note(older, error.message);
    } finally {
      newerRunning = false;
      if (newerAgain) {
        newerAgain = false;
        newerSoon();
      }
      watchPendingCalls();
    }
  }

  // A tool call's whole stored text: the one item after its neighbour, with `full`.
  async function whole(button) {
    const item = button.closest("li[data-cursor]");
    const before = item.previousElementSibling;
    const after = item.nextElementSibling;
    const params = before
      ? { after: before.dataset.cursor, limit: "1", full: "1" }
      : { before: after ? after.dataset.cursor : "", limit: "1", full: "1" };
    try {
      const page = await fetchPage(params);
      const found = page.querySelector('li[data-cursor="' + CSS.escape(item.dataset.cursor) + '"]');
      if (!found) throw new Error("that call moved: reload the page");
      const node = document.importNode(found, true);
      const details = node.querySelector("details");
      if (details) details.open = true;
      item.replaceWith(node);
    } catch (error) {
      note(button.parentElement, error.message);
    }
  }

  list.addEventListener("click", function (event) {
    const button = event.target.closest("button.whole");
    if (button) whole(button);
  });
  scroller.addEventListener("scroll", function () {
    if (scroller.scrollTop < OLDER_AT) fillOlder();
  });
  const olderButton = document.getElementById("load-older");
  if (olderButton) olderButton.addEventListener("click", loadOlder);

  // alp.js holds the page's one event stream and passes each notification on
  document.addEventListener("alp:event", newerSoon);
  document.addEventListener("alp:reconnected", newerSoon);
  document.addEventListener("alp:refreshed", function (event) {
    updateRootStates(event.detail);
  });

  // The composer: the same forms, answered in JSON, so the view keeps its place.
  if (composer) {
    const result = document.getElementById("composer-result");
    const prompt = document.getElementById("prompt");
    composer.addEventListener("submit", async function (event) {
      event.preventDefault();
      // a button's formAction is the page's own URL when it has no formaction of its own
      const by = event.submitter;
      const action = by && by.hasAttribute("formaction") ? by.formAction : composer.action;
      const buttons = composer.querySelectorAll("button");
      for (const b of buttons) b.disabled = true;
      result.className = "composer-result";
      result.setAttribute("role", "status");
      result.textContent = "Sending…";
      try {
        const response = await fetch(action, {
          method: "POST",
          credentials: "same-origin",
          headers: { Accept: "application/json" },
          body: new URLSearchParams(new FormData(composer)),
        });
        let answer = null;
        try {
          answer = await response.json();
        } catch (error) {
          answer = null;
        }
        if (answer && answer.ok) {
          result.textContent = answer.message;
          prompt.value = "";
          toBottom();
          newerSoon();
        } else {
          result.className = "composer-result error";
          result.setAttribute("role", "alert");
          const name = document.createElement("strong");
          if (answer && answer.error) {
            name.textContent = answer.error.name;
            result.replaceChildren(name, " " + answer.error.message);
          } else {
            name.textContent = "HTTP " + response.status;
            result.replaceChildren(name, " the page could not send it: reload and try again");
          }
        }
      } catch (error) {
        result.className = "composer-result error";
        result.setAttribute("role", "alert");
        result.textContent = "Not sent: " + error.message + " (is alpd running?)";
      } finally {
        for (const b of buttons) b.disabled = false;
      }
    });
  }

  toBottom();
  watchPendingCalls();
  list.dataset.ready = "1";
  fillOlder().then(function () {
    list.dataset.filled = "1";
  });
})();
