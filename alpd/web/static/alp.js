// alp's page, live: one EventSource on the daemon's notifications; when any arrives, the
// page is read again and each element marked data-live is replaced by its new version.
// Each notification is also passed on as an `alp:event` DOM event (a reconnect as
// `alp:reconnected`, a finished re-read as `alp:refreshed` with the new document), for the
// conversation view (conversation.js), which places its items itself.
// No framework, no build step, no inline script (the page's CSP forbids it).
"use strict";

(function () {
  const body = document.body;
  const stream = body.dataset.events;
  const href = body.dataset.href;
  if (!stream || !href || !window.EventSource) return;
  const dot = document.getElementById("connection");
  let timer = null;
  let opened = false;

  async function refresh() {
    timer = null;
    const response = await fetch(href, { credentials: "same-origin" });
    if (!response.ok) return;
    const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
    for (const old of document.querySelectorAll("[data-live]")) {
      const replacement = fresh.getElementById(old.id);
      if (replacement) old.replaceWith(document.importNode(replacement, true));
    }
    body.dataset.refreshed = String(Number(body.dataset.refreshed || 0) + 1);
    document.dispatchEvent(new CustomEvent("alp:refreshed", { detail: fresh }));
  }

  function soon() {
    if (timer === null) timer = setTimeout(refresh, 150);
  }

  const source = new EventSource(stream);
  source.onopen = function () {
    if (dot) dot.classList.add("live");
    // after a reconnect, catch up on whatever was missed while away
    if (opened) {
      soon();
      document.dispatchEvent(new CustomEvent("alp:reconnected"));
    }
    opened = true;
  };
  source.onerror = function () {
    if (dot) dot.classList.remove("live");
  };
  source.onmessage = function (event) {
    let method = null;
    try {
      method = JSON.parse(event.data).method;
    } catch (error) {
      method = null;
    }
    // a running root's new words change no part of the page but the conversation
    if (method !== "thread/transcript") soon();
    document.dispatchEvent(new CustomEvent("alp:event", { detail: method }));
  };
})();
