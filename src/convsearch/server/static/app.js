// convsearch playground. Every piece of server or user text reaches the page through textContent
// (never as HTML), and links only keep http(s) URLs, so result text cannot inject markup or script.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const log = $("log"), form = $("ask"), query = $("query"), status = $("status");
  const keyInput = $("api-key"), topicInput = $("topic"), sessionEl = $("session-id");

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v; else node.setAttribute(k, v);
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      node.append(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }

  function safeUrl(u) {
    try {
      const url = new URL(u, window.location.href);
      return url.protocol === "http:" || url.protocol === "https:" ? url.href : null;
    } catch (e) { return null; }
  }

  function newSessionId() {
    const rnd = (window.crypto && crypto.randomUUID) ? crypto.randomUUID()
      : Date.now().toString(36) + Math.random().toString(36).slice(2);
    return "pg-" + rnd;
  }

  let sessionId = sessionStorage.getItem("convsearch.session") || newSessionId();
  sessionStorage.setItem("convsearch.session", sessionId);
  sessionEl.textContent = sessionId;
  keyInput.value = sessionStorage.getItem("convsearch.key") || "";
  keyInput.addEventListener("change", () => sessionStorage.setItem("convsearch.key", keyInput.value));

  $("new-session").addEventListener("click", () => {
    sessionId = newSessionId();
    sessionStorage.setItem("convsearch.session", sessionId);
    sessionEl.textContent = sessionId;
    log.replaceChildren();
    status.textContent = "new session";
  });

  async function api(path, body) {
    const headers = { "Content-Type": "application/json" };
    if (keyInput.value.trim()) headers["Authorization"] = "Bearer " + keyInput.value.trim();
    const res = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
    const data = await res.json().catch(() => null);
    if (!res.ok) {
      const err = data && data.error ? data.error : { status: res.status, message: res.statusText };
      throw new Error(err.status + " " + (err.field ? err.field + ": " : "") + err.message);
    }
    return data;
  }

  function renderTurn(r) {
    const rw = r.rewrite;
    const card = el("div", { class: "turn", "data-testid": "turn" });
    const standalone = el("div", { class: "standalone" }, rw.changed ? "→ " : "= ",
      el("span", { class: "q", "data-testid": "standalone" }, r.standalone_query),
      el("span", { class: "badge", "data-testid": "method" }, rw.method));
    if (rw.fell_back) standalone.append(el("span", { class: "badge fallback" }, "fell back"));
    card.append(standalone);
    card.append(el("div", { class: "reason", "data-testid": "reason" }, "why: " + rw.reason));
    if (r.variants.length) {
      card.append(el("div", { class: "variants", "data-testid": "variants" }, "variants: " + r.variants.join(" | ")));
    }
    for (const note of r.trace.notes) card.append(el("div", { class: "meta" }, "note: " + note));
    const list = el("ol", { class: "results" });
    for (const c of r.results) {
      const href = safeUrl(c.url);
      const title = href ? el("a", { href, target: "_blank", rel: "noopener noreferrer" }, c.title || c.url)
        : el("span", {}, c.title || c.id);
      const meta = [c.provider, c.domain, c.date, c.tier ? "tier " + c.tier : ""].filter(Boolean).join(", ");
      const item = el("li", { "data-testid": "result" }, el("span", { class: "n" }, "[" + c.n + "] "), title,
        meta ? el("span", { class: "meta" }, " (" + meta + ")") : null,
        c.stale ? el("span", { class: "badge stale" }, "stale") : null,
        c.undated ? el("span", { class: "badge stale" }, "undated") : null,
        el("div", { class: "snippet" }, c.snippet));
      list.append(item);
    }
    if (!r.results.length) list.append(el("li", { class: "meta" }, "no results"));
    card.append(list);
    card.append(el("div", { class: "meta" }, `${r.trace.hits_before_dedup} hits → ${r.trace.hits_after_dedup} after dedup · ` +
      Object.entries(r.trace.timings_ms).map(([k, v]) => k + " " + v + " ms").join(", ")));
    return card;
  }

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const text = query.value.trim();
    if (!text) return;
    const entry = el("li", {}, el("div", { class: "user", "data-testid": "user" }, text));
    log.append(entry);
    query.value = "";
    status.textContent = "searching …";
    const body = { query: text, session_id: sessionId, top_k: 5 };
    if (topicInput.value.trim()) body.topic = topicInput.value.trim();
    try {
      const r = await api("/v1/search", body);
      entry.append(renderTurn(r));
      status.textContent = "";
      if (r.results.length) {  // the reply cites [1]: the session remembers what was shown
        await api("/v1/sessions/" + encodeURIComponent(sessionId) + "/messages",
          { messages: [{ role: "assistant", content: r.results[0].snippet + " [1]" }] });
      }
    } catch (e) {
      entry.append(el("div", { class: "error", "data-testid": "error" }, String(e.message || e)));
      status.textContent = "";
    }
    entry.scrollIntoView({ block: "end" });
  });
})();
