// convsearch playground. Every piece of server or user text reaches the page through textContent
// (never as HTML), and links only keep http(s) URLs, so result text cannot inject markup or script.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const log = $("log"), form = $("ask"), query = $("query"), status = $("status");
  const keyInput = $("api-key"), topicInput = $("topic"), sessionEl = $("session-id"), modeInput = $("mode");

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

  // where a passage of an indexed file comes from: "file › section, p. 12–13" ("" for web results and records)
  function provenance(md) {
    if (!md || !md.source || md.source_type === "web") return "";
    if ([md.doc_id, md.chunk, md.section, md.page].every((v) => v === undefined || v === null || v === "")) return "";
    const file = String(md.source).replace(/[\\/]+$/, "").split(/[\\/]/).pop() || String(md.source);
    let where = md.section ? file + " › " + md.section : file;
    if (md.page !== undefined && md.page !== null && md.page !== "") {
      where += ", p. " + md.page + (md.page_end && md.page_end !== md.page ? "–" + md.page_end : "");
    }
    return where;
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

  function headers() {
    const h = { "Content-Type": "application/json" };
    if (keyInput.value.trim()) h["Authorization"] = "Bearer " + keyInput.value.trim();
    return h;
  }

  async function api(path, body) {
    const res = await fetch(path, { method: "POST", headers: headers(), body: JSON.stringify(body) });
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
        provenance(c.metadata) ? el("div", { class: "where", "data-testid": "where" }, provenance(c.metadata)) : null,
        el("div", { class: "snippet" }, c.snippet));
      list.append(item);
    }
    if (!r.results.length) list.append(el("li", { class: "meta" }, "no results"));
    card.append(list);
    card.append(el("div", { class: "meta" }, `${r.trace.hits_before_dedup} hits → ${r.trace.hits_after_dedup} after dedup · ` +
      Object.entries(r.trace.timings_ms).map(([k, v]) => k + " " + v + " ms").join(", ")));
    return card;
  }

  // raw vs rewritten, side by side: what each query found and the keyword hits the rewrite won
  function renderCompare(c) {
    const col = (title, ids, hits) => el("div", {},
      el("h3", {}, title + " · " + hits + " keyword hits"),
      ids.length ? el("ol", {}, ...ids.map((id) => el("li", {}, id))) : el("div", { class: "meta" }, "no results"));
    return el("div", { class: "compare", "data-testid": "compare" },
      col("raw: " + c.original, c.original_ids, c.original_keyword_hits),
      col("rewritten: " + c.rewritten, c.rewritten_ids, c.rewritten_keyword_hits),
      el("div", { class: "gain" }, "keyword hit gain: " + (c.keyword_hit_gain > 0 ? "+" : "") + c.keyword_hit_gain));
  }

  function citationList(cites) {
    const list = el("ol", { class: "results" });
    for (const c of cites) {
      const href = safeUrl(c.url);
      const title = href ? el("a", { href, target: "_blank", rel: "noopener noreferrer" }, c.title || c.url)
        : el("span", {}, c.title);
      const meta = [c.domain, c.date].filter(Boolean).join(", ");
      list.append(el("li", { "data-testid": "citation" }, el("span", { class: "n" }, "[" + c.n + "] "), title,
        meta ? el("span", { class: "meta" }, " (" + meta + ")") : null,
        provenance(c.metadata) ? el("div", { class: "where", "data-testid": "where" }, provenance(c.metadata)) : null));
    }
    return list;
  }

  // Answer mode: POST /v1/answer with stream=true; server-sent events read from the response body
  async function askAgent(text, entry) {
    const card = el("div", { class: "turn", "data-testid": "answer" });
    const steps = el("ul", { class: "steps" }), answer = el("div", { class: "answer-text", "data-testid": "answer-text" });
    card.append(steps, answer);
    entry.append(card);
    const res = await fetch("/v1/answer", { method: "POST", headers: headers(),
      body: JSON.stringify({ query: text, session_id: sessionId, stream: true }) });
    if (!res.ok) {
      const data = await res.json().catch(() => null);
      const err = data && data.error ? data.error : { status: res.status, message: res.statusText };
      throw new Error(err.status + " " + err.message);
    }
    const reader = res.body.getReader(), decoder = new TextDecoder();
    let buf = "";
    const handle = (event, data) => {
      if (event === "search") {
        const what = data.error ? "refused: " + data.error : data.results.length + " results" + (data.cached ? " (cached)" : "");
        steps.append(el("li", { "data-testid": "step" }, "searched " + (data.searched || data.query) + " → " + what));
      } else if (event === "token") {
        answer.append(document.createTextNode(data.text));
      } else if (event === "replace") {  // "" drops a step's preamble; else the repaired or degraded text
        answer.textContent = data.text;
      } else if (event === "citations") {
        card.append(citationList(data));
      } else if (event === "done") {
        // a degraded answer's text lists the sources the list above shows: keep its note line only
        if (data.flags.degraded && data.citations.length) answer.textContent = data.text.split("\n")[0];
        const f = data.flags, notes = Object.keys(f).filter((k) => f[k] === true || (Array.isArray(f[k]) && f[k].length));
        card.append(el("div", { class: "meta" }, `${data.llm_calls.length} LLM calls · ${data.usage.total_tokens} tokens · ` +
          `${Math.round(data.ms)} ms` + (notes.length ? " · " + notes.join(", ") : "")));
      }
    };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += decoder.decode(value, { stream: true });
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, i); buf = buf.slice(i + 2);
        let event = "message", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("event: ")) event = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (data) handle(event, JSON.parse(data));
      }
    }
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
      if (modeInput.value === "answer") {
        status.textContent = "asking the agent …";
        await askAgent(text, entry);
        status.textContent = "";
        entry.scrollIntoView({ block: "end" });
        return;
      }
      const r = await api("/v1/search", body);
      entry.append(renderTurn(r));
      status.textContent = "";
      if (r.rewrite.changed) {
        const c = await api("/v1/compare", { original: r.query, rewritten: r.standalone_query, top_k: 5 });
        entry.lastChild.append(renderCompare(c));
      }
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
