// llmem host — chat page. Plain ES2020, no dependencies, nothing fetched from elsewhere.
// Talks to the host over one WebSocket (/ws): the protocol is written out in llmem/host/chat_socket.py.
// chats.js (the list of chats) and attach.js (files) plug into window.llmemPage, made at the end.
(() => {
  "use strict";

  const SESSION_KEY = "llmem-host.session";
  const BACKOFF_START_MS = 500;
  const BACKOFF_MAX_MS = 8000;
  const OFFLINE_AFTER_ATTEMPTS = 4;
  const LONG_STRING = 4000; // strings in tool JSON longer than this are shortened on screen

  const $ = (sel) => document.querySelector(sel);
  const els = {
    scroller: $("#scroller"),
    conversation: $("#conversation"),
    welcome: $("#welcome"),
    working: $("#working"),
    workingText: $("#working .working-text"),
    input: $("#input"),
    send: $("#send"),
    form: $("#composer"),
    note: $("#composer-note"),
    connection: $("#connection"),
    connText: $("#connection .conn-text"),
    provider: $("#provider"),
    standin: $("#standin-badge"),
    jump: $("#jump"),
    newChat: $("#new-chat"),
    chats: $("#chats"),
    chatsDialog: $("#chats-dialog"),
    chatsList: $("#chats-list"),
    zoomDialog: $("#zoom-dialog"),
    zoomFrame: $("#zoom-frame"),
    zoomNote: $("#zoom-note"),
    zoomLevel: $("#zoom-level"),
    chips: $(".chips"),
    theme: $("#theme"),
    model: $("#model"),
    statusDialog: $("#status-dialog"),
    statusServers: $("#status-servers"),
    zoomDownload: $("#zoom-download"),
  };

  const state = {
    ws: null,
    open: false, // socket open and the host said hello
    busy: false, // a turn is running
    stopping: false,
    attempts: 0,
    retryTimer: null,
    sessionId: readSession(),
    current: null, // {el, body, text} — the assistant bubble being streamed into
    steps: new Map(), // callId -> step record
    confirms: new Map(), // requestId -> card
    stick: true, // keep scrolled to the bottom
    renderQueued: false,
    zooms: new Map(), // zoomId -> {mime, data}: the picture shown meanwhile
    zoomScale: null, // the full-size picture's scale; null: fitted to the window
    replaced: false, // the host dropped this page for a newer one: reconnect only when asked
    hello: {}, // the host's last connection payload: models, servers and their state
    switching: false, // a new chat is connecting: a question sent meanwhile waits in queued
    queued: null, // that question's payload
  };
  // what each message said, as Markdown (the answer a Copy copies) and the files a question had
  const rawText = new WeakMap();
  const attachedTo = new WeakMap();

  // ---------------------------------------------------------------- helpers

  function readSession() {
    const asked = new URLSearchParams(location.search).get("session");
    if (asked) return asked; // a chat from the list of earlier chats
    try {
      return sessionStorage.getItem(SESSION_KEY) || null;
    } catch (_) {
      return null;
    }
  }

  function writeSession(id) {
    state.sessionId = id || null;
    try {
      if (id) sessionStorage.setItem(SESSION_KEY, id);
      else sessionStorage.removeItem(SESSION_KEY);
    } catch (_) {
      /* storage may be unavailable; the session then lasts as long as the page */
    }
  }

  // a path of the host's HTTP API, with the page's token when it was opened with one
  function apiUrl(path, params) {
    const q = new URLSearchParams(params || {});
    const token = new URLSearchParams(location.search).get("token");
    if (token) q.set("token", token);
    const qs = q.toString();
    return `${path}${qs ? `?${qs}` : ""}`;
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === "class") node.className = v;
        else if (k === "text") node.textContent = v;
        else if (k.startsWith("on") && typeof v === "function") node.addEventListener(k.slice(2), v);
        else node.setAttribute(k, v === true ? "" : String(v));
      }
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  }

  const ESC = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
  function escapeHtml(s) {
    return String(s).replace(/[&<>"']/g, (c) => ESC[c]);
  }

  function formatDuration(ms) {
    if (typeof ms !== "number" || !isFinite(ms)) return "";
    if (ms < 1000) return `${Math.round(ms)} ms`;
    if (ms < 60000) return `${(ms / 1000).toFixed(ms < 10000 ? 1 : 0)} s`;
    const m = Math.floor(ms / 60000);
    const s = Math.round((ms % 60000) / 1000);
    return `${m} min ${s} s`;
  }

  // ---------------------------------------------------------------- markdown (safe)
  // Every piece of model text is HTML-escaped before any markup is added; the only tags that
  // reach innerHTML are the ones produced here.

  function inline(raw) {
    let s = escapeHtml(String(raw).replace(/\u0000/g, ""));
    const codes = [];
    s = s.replace(/(`+)([^`]|[^`][\s\S]*?[^`])\1(?!`)/g, (_, __, code) => {
      codes.push(`<code>${code.trim() === "" ? code : code.replace(/^ (.*) $/, "$1")}</code>`);
      return `\u0000${codes.length - 1}\u0000`;
    });
    // [text](http(s)://…) links; the URL is already escaped, so it cannot leave the attribute
    s = s.replace(/\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g, (_, text, url) =>
      `<a href="${url}" target="_blank" rel="noopener noreferrer">${text}</a>`);
    s = s.replace(/\*\*(?=\S)([\s\S]*?\S)\*\*/g, "<strong>$1</strong>");
    s = s.replace(/(^|[^\w])__(?=\S)([\s\S]*?\S)__(?!\w)/g, "$1<strong>$2</strong>");
    s = s.replace(/(^|[^*\w])\*(?=[^\s*])([^*\n]*?[^\s*])\*(?!\*)/g, "$1<em>$2</em>");
    s = s.replace(/(^|[^\w])_(?=[^\s_])([^_\n]*?[^\s_])_(?!\w)/g, "$1<em>$2</em>");
    s = s.replace(/~~(?=\S)([\s\S]*?\S)~~/g, "<del>$1</del>");
    s = s.replace(/\u0000(\d+)\u0000/g, (_, i) => codes[Number(i)]);
    return s;
  }

  const RE_FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
  const RE_HEADING = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
  const RE_HR = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
  const RE_ITEM = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/;
  const RE_TABLE_SEP = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;

  function splitRow(line) {
    let t = line.trim();
    if (t.startsWith("|")) t = t.slice(1);
    if (t.endsWith("|") && !t.endsWith("\\|")) t = t.slice(0, -1);
    const cells = [];
    let cur = "";
    let inCode = false;
    for (let i = 0; i < t.length; i++) {
      const c = t[i];
      if (c === "\\" && t[i + 1] === "|") { cur += "|"; i++; continue; }
      if (c === "`") inCode = !inCode;
      if (c === "|" && !inCode) { cells.push(cur.trim()); cur = ""; continue; }
      cur += c;
    }
    cells.push(cur.trim());
    return cells;
  }

  function startsBlock(line, next) {
    return (
      RE_FENCE.test(line) ||
      RE_HEADING.test(line) ||
      RE_HR.test(line) ||
      /^ {0,3}>/.test(line) ||
      RE_ITEM.test(line) ||
      (line.includes("|") && next !== undefined && RE_TABLE_SEP.test(next) && next.includes("-"))
    );
  }

  function renderMarkdown(src) {
    const lines = String(src).replace(/\r\n?/g, "\n").split("\n");
    return renderLines(lines, 0);
  }

  function renderLines(lines, depth) {
    const out = [];
    let i = 0;
    const n = lines.length;
    while (i < n) {
      const line = lines[i];

      // fenced code (an unclosed fence runs to the end: fine while streaming)
      const fence = line.match(RE_FENCE);
      if (fence) {
        const marker = fence[1];
        const lang = fence[2] || "";
        const indent = line.match(/^ */)[0].length;
        const body = [];
        i++;
        while (i < n && !new RegExp(`^ {0,3}${marker[0]}{${marker.length},}\\s*$`).test(lines[i])) {
          body.push(indent ? lines[i].replace(new RegExp(`^ {0,${indent}}`), "") : lines[i]);
          i++;
        }
        i++; // closing fence
        const langAttr = lang ? ` data-lang="${escapeHtml(lang)}"` : "";
        const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : "";
        out.push(`<div class="code-block"${langAttr}>${label}<pre><code>${escapeHtml(body.join("\n"))}</code></pre></div>`);
        continue;
      }

      if (/^\s*$/.test(line)) { i++; continue; }

      const h = line.match(RE_HEADING);
      if (h) {
        const level = Math.min(h[1].length, 4);
        out.push(`<h${level + 2} class="md-h${level}">${inline(h[2])}</h${level + 2}>`);
        i++;
        continue;
      }

      if (RE_HR.test(line)) { out.push("<hr>"); i++; continue; }

      if (/^ {0,3}>/.test(line)) {
        const body = [];
        while (i < n && /^ {0,3}>/.test(lines[i])) {
          body.push(lines[i].replace(/^ {0,3}> ?/, ""));
          i++;
        }
        out.push(`<blockquote>${depth < 6 ? renderLines(body, depth + 1) : inline(body.join(" "))}</blockquote>`);
        continue;
      }

      // table: header row, separator row, body rows
      if (line.includes("|") && i + 1 < n && RE_TABLE_SEP.test(lines[i + 1]) && lines[i + 1].includes("-")) {
        const head = splitRow(line);
        const aligns = splitRow(lines[i + 1]).map((c) =>
          c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : "");
        i += 2;
        const rows = [];
        while (i < n && lines[i].includes("|") && !/^\s*$/.test(lines[i])) {
          rows.push(splitRow(lines[i]));
          i++;
        }
        const cell = (tag, text, k) => {
          const a = aligns[k] ? ` style="text-align:${aligns[k]}"` : "";
          return `<${tag}${a}>${inline(text || "")}</${tag}>`;
        };
        const thead = `<tr>${head.map((c, k) => cell("th", c, k)).join("")}</tr>`;
        const tbody = rows.map((r) => `<tr>${head.map((_, k) => cell("td", r[k], k)).join("")}</tr>`).join("");
        out.push(`<div class="table-wrap"><table><thead>${thead}</thead><tbody>${tbody}</tbody></table></div>`);
        continue;
      }

      const item = line.match(RE_ITEM);
      if (item) {
        const baseIndent = item[1].length;
        const ordered = /\d/.test(item[2]);
        const start = ordered ? parseInt(item[2], 10) : 1;
        const items = [];
        let cur = null;
        while (i < n) {
          const l = lines[i];
          const m = l.match(RE_ITEM);
          if (m && m[1].length <= baseIndent + 1 && /\d/.test(m[2]) === ordered) {
            cur = [m[3]];
            items.push(cur);
            i++;
            continue;
          }
          if (m && m[1].length <= baseIndent + 1) break; // a different kind of list
          if (/^\s*$/.test(l)) {
            // a blank line continues the list only if more of it follows
            const nx = lines[i + 1];
            if (nx !== undefined && (/^\s{2,}\S/.test(nx) || (RE_ITEM.test(nx) && nx.match(RE_ITEM)[1].length <= baseIndent + 1 && /\d/.test(nx.match(RE_ITEM)[2]) === ordered))) {
              if (cur) cur.push("");
              i++;
              continue;
            }
            break;
          }
          const indent = l.match(/^\s*/)[0].length;
          if (indent > baseIndent && cur) {
            cur.push(l.slice(Math.min(indent, baseIndent + 2 + (ordered ? 1 : 0))));
            i++;
            continue;
          }
          // lazy continuation of the item's paragraph
          if (cur && !startsBlock(l, lines[i + 1])) {
            cur.push(l.trim());
            i++;
            continue;
          }
          break;
        }
        const lis = items.map((parts) => {
          while (parts.length > 1 && /^\s*$/.test(parts[parts.length - 1])) parts.pop();
          if (parts.length === 1) return `<li>${inline(parts[0])}</li>`;
          const inner = depth < 8 ? renderLines(parts, depth + 1) : inline(parts.join(" "));
          return `<li>${inner}</li>`;
        });
        const tag = ordered ? "ol" : "ul";
        const startAttr = ordered && start !== 1 ? ` start="${start}"` : "";
        out.push(`<${tag}${startAttr}>${lis.join("")}</${tag}>`);
        continue;
      }

      // paragraph: consecutive lines up to a blank line or the start of another block
      const para = [line];
      i++;
      while (i < n && !/^\s*$/.test(lines[i]) && !startsBlock(lines[i], lines[i + 1])) {
        para.push(lines[i]);
        i++;
      }
      out.push(`<p>${para.map((p) => inline(p.trim())).join("<br>")}</p>`);
    }
    return out.join("");
  }

  // ---------------------------------------------------------------- JSON display

  function shorten(value) {
    if (typeof value === "string") {
      return value.length > LONG_STRING
        ? `${value.slice(0, 600)} … [${value.length.toLocaleString()} characters; use Copy for all of it]`
        : value;
    }
    if (Array.isArray(value)) return value.map(shorten);
    if (value && typeof value === "object") {
      const o = {};
      for (const [k, v] of Object.entries(value)) o[k] = shorten(v);
      return o;
    }
    return value;
  }

  function parseMaybeJson(value) {
    if (typeof value !== "string") return value;
    const t = value.trim();
    if ((t.startsWith("{") && t.endsWith("}")) || (t.startsWith("[") && t.endsWith("]"))) {
      try {
        return JSON.parse(t);
      } catch (_) {
        /* not JSON after all */
      }
    }
    return value;
  }

  function highlightJson(text) {
    const re = /("(?:\\u[a-fA-F0-9]{4}|\\[^u]|[^\\"])*"(\s*:)?|\b(?:true|false|null)\b|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;
    let out = "";
    let last = 0;
    let m;
    while ((m = re.exec(text))) {
      out += escapeHtml(text.slice(last, m.index));
      const tok = m[0];
      let cls = "j-num";
      if (tok.startsWith('"')) cls = m[2] ? "j-key" : "j-str";
      else if (tok === "true" || tok === "false") cls = "j-bool";
      else if (tok === "null") cls = "j-null";
      out += `<span class="${cls}">${escapeHtml(tok)}</span>`;
      last = m.index + tok.length;
    }
    return out + escapeHtml(text.slice(last));
  }

  // A <pre> for a value: pretty JSON when it is JSON, wrapped plain text when it is a string.
  function valueBlock(value, label) {
    const v = parseMaybeJson(value);
    const full = typeof v === "string" ? v : safeStringify(v);
    const wrap = el("div", { class: "value-block" });
    const head = el("div", { class: "value-head" }, el("span", { class: "value-label", text: label }));
    const copy = el("button", { type: "button", class: "copy", text: "Copy", "aria-label": `Copy ${label.toLowerCase()}` });
    copy.addEventListener("click", (e) => {
      e.preventDefault();
      copyText(full, copy);
    });
    head.append(copy);
    // focusable to scroll it by keyboard, so named: a screen reader says what it holds
    const pre = el("pre", { class: typeof v === "string" ? "value text" : "value json", tabindex: "0", "aria-label": label });
    if (typeof v === "string") pre.textContent = shorten(v) || "(empty)";
    else pre.innerHTML = highlightJson(safeStringify(shorten(v)));
    wrap.append(head, pre);
    return wrap;
  }

  function safeStringify(v) {
    try {
      const s = JSON.stringify(v, null, 2);
      return s === undefined ? String(v) : s;
    } catch (_) {
      return String(v);
    }
  }

  function copyText(text, button) {
    const done = (ok) => {
      const old = button.dataset.label || button.textContent;
      button.dataset.label = old;
      button.textContent = ok ? "Copied" : "Copy failed";
      setTimeout(() => { button.textContent = old; }, 1400);
    };
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(() => done(true), () => done(fallbackCopy(text)));
    } else {
      done(fallbackCopy(text));
    }
  }

  function fallbackCopy(text) {
    const ta = el("textarea", { class: "visually-hidden", "aria-hidden": "true" });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    let ok = false;
    try { ok = document.execCommand("copy"); } catch (_) { ok = false; }
    ta.remove();
    return ok;
  }

  // ---------------------------------------------------------------- scrolling

  function nearBottom() {
    const s = els.scroller;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 80;
  }

  function scrollToBottom(force) {
    if (force) state.stick = true;
    if (!state.stick) {
      els.jump.hidden = false;
      return;
    }
    els.scroller.scrollTop = els.scroller.scrollHeight;
    els.jump.hidden = true;
  }

  let lastScrollTop = 0;
  els.scroller.addEventListener("scroll", () => {
    const st = els.scroller.scrollTop;
    if (nearBottom()) {
      state.stick = true;
      els.jump.hidden = true;
    } else if (st < lastScrollTop - 2) {
      state.stick = false; // the person scrolled up: leave them there, with the way back
      els.jump.hidden = false;
    }
    lastScrollTop = st;
  }, { passive: true });
  // wheel / touch upwards means "I am reading", even before the scroll event lands
  els.scroller.addEventListener("wheel", (e) => { if (e.deltaY < 0) state.stick = false; }, { passive: true });
  // the input bar grows, a note appears under it, the working dots go: the scroller changes size
  // without a scroll event, and the last line would sit under the input bar; stay at the bottom
  if (window.ResizeObserver) {
    const keep = new ResizeObserver(() => { if (state.stick) scrollToBottom(); });
    keep.observe(els.scroller);
    keep.observe(els.conversation);
  }
  els.jump.addEventListener("click", () => {
    scrollToBottom(true);
    els.input.focus();
  });

  // ---------------------------------------------------------------- conversation

  function updateEmpty() {
    const empty = els.conversation.childElementCount === 0;
    els.welcome.hidden = !empty;
  }

  function append(node) {
    els.conversation.append(node);
    updateEmpty();
    scrollToBottom();
    return node;
  }

  function endAssistant() {
    const cur = state.current;
    if (cur) {
      flushRender();
      cur.el.classList.remove("streaming");
      cur.el.removeAttribute("aria-busy"); // whole now: a screen reader reads it once
    }
    state.current = null;
  }

  function formatSize(bytes) {
    if (typeof bytes !== "number" || !isFinite(bytes)) return "";
    if (bytes < 1024) return `${bytes} B`;
    if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10240 ? 1 : 0)} kB`;
    return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  }

  // the files a question came with, as small chips under its text
  function fileList(files) {
    if (!Array.isArray(files) || !files.length) return null;
    return el("ul", { class: "msg-files", "aria-label": "Attached files" }, ...files.map((f) =>
      el("li", { class: "file-chip", title: "Saved in the workspace" },
        el("span", { class: "file-name", text: String(f.name || "") }),
        el("span", { class: "file-size", text: formatSize(f.size) }))));
  }

  // a question: its text, its files, and Edit (to change it and ask again)
  function addUser(text, files) {
    endAssistant();
    const body = el("div", { class: "msg-body" });
    body.textContent = text;
    const edit = el("button", { type: "button", class: "msg-action edit", text: "Edit", "aria-label": "Edit this question and ask again" });
    const node = el("div", { class: "msg user" }, el("span", { class: "visually-hidden", text: "You said: " }), body,
      fileList(files), el("div", { class: "msg-actions" }, edit));
    rawText.set(node, text);
    attachedTo.set(node, Array.isArray(files) ? files : []);
    edit.addEventListener("click", () => editQuestion(node));
    return append(node);
  }

  function newAssistant() {
    const body = el("div", { class: "msg-body markdown" });
    const node = el("div", { class: "msg assistant" }, el("span", { class: "visually-hidden", text: "Assistant: " }), body);
    append(node);
    state.current = { el: node, body, text: "" };
    rawText.set(node, "");
    return state.current;
  }

  function addAssistant(text) {
    endAssistant();
    const cur = newAssistant();
    cur.text = text || "";
    rawText.set(cur.el, cur.text);
    cur.body.innerHTML = renderMarkdown(cur.text);
    decorateCode(cur.body);
    state.current = null;
  }

  // -- turns: a question and all that came of it, up to the next question

  // how many questions come after this one; what editing or asking it again drops, in words
  function laterThan(userNode) {
    return questions().length - questions().indexOf(userNode) - 1;
  }
  function dropsText(later) {
    return `This drops the ${later === 1 ? "later question and its answer" : `${later} later questions and their answers`}.`;
  }

  function questions() {
    return [...els.conversation.querySelectorAll(":scope > .msg.user")];
  }

  // the nodes after a question, up to the next one (or the end)
  function turnOf(userNode) {
    const nodes = [];
    for (let n = userNode.nextElementSibling; n && !n.matches(".msg.user"); n = n.nextElementSibling) nodes.push(n);
    return nodes;
  }

  // the turn's answer as Markdown: every text the model wrote in it, in order
  function answerOf(userNode) {
    return turnOf(userNode).filter((n) => n.matches(".msg.assistant")).map((n) => rawText.get(n) || "")
      .filter((t) => t.trim()).join("\n\n");
  }

  // each finished turn ends with its actions: Copy (the answer, as Markdown) and Regenerate
  function closeTurns(exceptLast) {
    const asked = questions();
    if (exceptLast) asked.pop(); // its answer is still coming
    for (const userNode of asked) {
      const nodes = turnOf(userNode);
      const last = nodes[nodes.length - 1];
      if (last && last.matches(".turn-actions")) continue;
      for (const old of nodes.filter((n) => n.matches(".turn-actions"))) old.remove();
      const copy = el("button", { type: "button", class: "msg-action copy-answer", text: "Copy",
        "aria-label": "Copy the answer as Markdown", title: "Copy the answer as Markdown" });
      const again = el("button", { type: "button", class: "msg-action regenerate", text: "Regenerate",
        "aria-label": "Ask this question again", title: "Forget this answer and ask the question again" });
      copy.hidden = !answerOf(userNode);
      copy.addEventListener("click", () => copyText(answerOf(userNode), copy));
      again.addEventListener("click", () => {
        // an earlier answer: what asking again drops is said first, and a second click confirms
        const later = laterThan(userNode);
        if (!later || again.dataset.confirm) { regenerate(userNode); return; }
        again.dataset.confirm = "true";
        again.textContent = "Drop them and ask again";
        again.title = dropsText(later);
        again.setAttribute("aria-label", `${dropsText(later)} Click again to ask this question again.`);
        const note = el("span", { class: "drop-note", role: "status", text: dropsText(later) });
        again.before(note);
        again.addEventListener("blur", () => {
          delete again.dataset.confirm;
          again.textContent = "Regenerate";
          again.title = "Forget this answer and ask the question again";
          again.setAttribute("aria-label", "Ask this question again");
          note.remove();
        }, { once: true });
      });
      const bar = el("div", { class: "turn-actions", role: "group", "aria-label": "This answer" }, copy, again);
      (last || userNode).after(bar);
    }
    updateControls();
  }

  // everything after a question goes, later questions and their answers too, as the host forgets
  // them (its live views told first); with ``andItself`` the question too
  function forgetFrom(userNode, andItself) {
    const gone = [];
    for (let n = userNode.nextElementSibling; n; n = n.nextElementSibling) gone.push(n);
    if (andItself) gone.unshift(userNode);
    for (const [callId, rec] of state.steps) if (gone.includes(rec.node)) state.steps.delete(callId);
    if (window.llmemApps) window.llmemApps.teardownAll("the answer was asked again", (node) => gone.some((g) => g.contains(node)));
    for (const n of gone) n.remove();
    state.current = null;
    updateEmpty();
  }

  function regenerate(userNode) {
    if (state.busy || !state.open) return;
    const index = questions().indexOf(userNode);
    if (index < 0 || !sendJson({ type: "regenerate", payload: { index } })) return;
    forgetFrom(userNode, false);
    setBusy(true);
    scrollToBottom(true);
    els.input.focus(); // the button pressed is gone with the answer
  }

  // Edit: the question becomes a text box; Send asks it in its place, with what came after it forgotten
  function editQuestion(userNode) {
    if (state.busy || !state.open || userNode.classList.contains("editing")) return;
    const body = userNode.querySelector(".msg-body");
    const box = el("textarea", { class: "edit-box", rows: "2", "aria-label": "Your question, edited" });
    box.value = rawText.get(userNode) || body.textContent;
    // what sending drops, said before it is sent (the host forgets every later turn)
    const later = laterThan(userNode);
    const send = el("button", { type: "button", class: "approve", text: later ? "Send and drop them" : "Send" });
    const cancel = el("button", { type: "button", class: "deny", text: "Cancel" });
    const warning = later
      ? el("p", { class: "edit-warning", role: "note", id: `edit-warning-${Date.now()}`, text: dropsText(later) })
      : null;
    if (warning) box.setAttribute("aria-describedby", warning.id);
    const form = el("div", { class: "edit-form" }, box, warning, el("div", { class: "edit-actions" }, cancel, send));
    userNode.classList.add("editing");
    body.hidden = true;
    body.after(form);
    const close = () => {
      form.remove();
      body.hidden = false;
      userNode.classList.remove("editing");
      userNode.querySelector(".edit").focus();
    };
    const go = () => {
      const text = box.value.trim();
      const files = attachedTo.get(userNode) || [];
      const index = questions().indexOf(userNode);
      if ((!text && !files.length) || state.busy || index < 0) return;
      if (!sendJson({ type: "edit", payload: { index, text, attachments: files } })) return;
      forgetFrom(userNode, false);
      form.remove();
      body.hidden = false;
      body.textContent = text;
      rawText.set(userNode, text);
      userNode.classList.remove("editing");
      setBusy(true);
      scrollToBottom(true);
      els.input.focus();
    };
    send.addEventListener("click", go);
    cancel.addEventListener("click", close);
    box.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); go(); }
      if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); close(); }
    });
    box.style.height = `${Math.min(240, Math.max(48, box.scrollHeight))}px`;
    box.focus();
    box.setSelectionRange(box.value.length, box.value.length);
  }

  function appendText(piece) {
    if (typeof piece !== "string" || piece === "") return;
    const cur = state.current || newAssistant();
    cur.text += piece;
    cur.el.classList.add("streaming");
    cur.el.setAttribute("aria-busy", "true"); // the live log waits for the whole answer, not each piece
    queueRender();
  }

  function queueRender() {
    if (state.renderQueued) return;
    state.renderQueued = true;
    const run = () => {
      if (!state.renderQueued) return;
      flushRender();
    };
    requestAnimationFrame(run);
    setTimeout(run, 120); // background tabs do not run animation frames
  }

  function flushRender() {
    state.renderQueued = false;
    const cur = state.current;
    if (!cur) return;
    rawText.set(cur.el, cur.text);
    cur.body.innerHTML = renderMarkdown(cur.text);
    decorateCode(cur.body);
    scrollToBottom();
  }

  function decorateCode(root) {
    for (const block of root.querySelectorAll(".code-block")) {
      const btn = el("button", { type: "button", class: "copy code-copy", text: "Copy", "aria-label": "Copy code" });
      btn.addEventListener("click", () => copyText(block.querySelector("code").textContent, btn));
      block.append(btn);
    }
  }

  function addError(message) {
    endAssistant();
    return append(el("div", { class: "msg error", role: "alert" },
      el("span", { class: "error-icon", "aria-hidden": "true", text: "!" }),
      el("span", { class: "msg-body", text: message || "Something went wrong." })));
  }

  function addNotice(message, kind) {
    endAssistant();
    return append(el("div", { class: `notice ${kind || ""}`.trim(), text: message }));
  }

  // -- tool steps

  function splitTool(name) {
    const s = String(name || "tool");
    const k = s.indexOf(":");
    return k > 0 ? [s.slice(0, k), s.slice(k + 1)] : ["", s];
  }

  // a tooltip drawn by the page (style.css .has-tip), shown on hover and on keyboard focus, and
  // read by a screen reader as the element's description (a title shows on hover only)
  function tip(node, text) {
    node.classList.add("has-tip");
    node.dataset.tip = text;
    node.setAttribute("aria-description", text);
    node.removeAttribute("title");
  }

  const OUTCOME_TIPS = {
    done: "done: the tool answered",
    failed: "failed: the tool answered with an error",
    declined: "declined: you said not to run it",
    cancelled: "stopped before it answered",
  };

  // what a step's line means, under its outcome word when the line is hovered or focused (the
  // line's own ::after is its chevron): which tool, what the outcome says, that it opens
  function stepTip(rec, outcome) {
    const said = outcome ? OUTCOME_TIPS[outcome] || outcome : "running";
    const text = `A tool call: ${rec.tool} · ${said}. Open it for its arguments and result.`;
    rec.status.dataset.tip = text;
    rec.summary.setAttribute("aria-description", text);
  }

  // "debrief-calc:run_tool" titled "run_tool · closest-approach": the server faint, what ran in bold
  function stepLabel(tool, title) {
    const [server, short] = splitTool(tool);
    const frag = el("span", { class: "tool-name", title: String(tool || "") });
    if (server) frag.append(el("span", { class: "tool-server", text: `${server}:` }));
    frag.append(el("span", { class: "tool-short", text: title || short }));
    return frag;
  }

  function createStep(callId, tool, title) {
    endAssistant();
    const icon = el("span", { class: "step-icon", "aria-hidden": "true" }, el("span", { class: "spinner" }));
    const status = el("span", { class: "step-status", text: "running…" });
    const duration = el("span", { class: "step-duration" });
    const preview = el("span", { class: "step-preview" });
    const label = stepLabel(tool, title);
    const summary = el("summary", null, icon, label, status, preview, duration);
    const body = el("div", { class: "step-body" });
    const node = el("details", { class: "tool-step", "data-call-id": callId, "data-state": "processing" }, summary, body);
    const rec = { node, summary, icon, status, duration, preview, body, tool, label, args: undefined, argsEl: null, resultEl: null };
    stepTip(rec, "");
    state.steps.set(callId, rec);
    append(node);
    return rec;
  }

  function setStepArgs(rec, args) {
    if (args === undefined) return;
    rec.args = args;
    const block = valueBlock(args, "Arguments");
    if (rec.argsEl) rec.argsEl.replaceWith(block);
    else rec.body.prepend(block);
    rec.argsEl = block;
  }

  // text cut only at a word, with "…"
  function clip(text, limit) {
    const t = String(text || "").replace(/\s+/g, " ").trim();
    if (t.length <= limit) return t;
    let cut = t.slice(0, limit - 1);
    const space = cut.lastIndexOf(" ");
    if (space > limit / 2) cut = cut.slice(0, space);
    return `${cut.replace(/[ ,;:.]+$/, "")}…`;
  }

  const OUTCOME_ICONS = { done: "✓", failed: "✗", declined: "⊘", cancelled: "■" };

  // a finished step: its outcome (done, failed, declined, cancelled) and its one-line headline
  function setOutcome(rec, outcome, headline) {
    rec.node.dataset.state = outcome === "done" ? "complete" : "error";
    rec.node.dataset.outcome = outcome;
    if (outcome === "declined") rec.node.dataset.declined = "true";
    if (outcome === "cancelled") rec.node.dataset.interrupted = "true";
    rec.icon.textContent = OUTCOME_ICONS[outcome] || "✓";
    rec.status.textContent = outcome;
    rec.preview.textContent = clip(headline, 140);
    rec.preview.title = String(headline || "");
    stepTip(rec, outcome);
  }

  function finishStep(rec, data, message) {
    const isError = !!data.isError;
    const outcome = data.outcome || (data.declined ? "declined" : isError ? "failed" : "done");
    if (data.title && rec.label) {
      const label = stepLabel(rec.tool, data.title);
      rec.label.replaceWith(label);
      rec.label = label;
    }
    const headline = data.headline !== undefined ? data.headline
      : isError ? (typeof data.result === "string" ? data.result : message || "") : "";
    setOutcome(rec, outcome, headline);
    rec.duration.textContent = outcome === "done" || outcome === "failed" ? formatDuration(data.durationMs) : "";
    if ("result" in data) {
      rec.result = data.result;
      // a step that did not run (declined, stopped) is no error: a neutral note for the person
      const ran = outcome === "done" || outcome === "failed";
      const block = valueBlock(data.result, !ran ? "Outcome" : isError ? "Error" : "Result");
      if (isError && ran) block.classList.add("is-error");
      if (!ran) block.classList.add("is-note");
      if (rec.resultEl) rec.resultEl.replaceWith(block);
      else rec.body.append(block);
      rec.resultEl = block;
    }
    if (!rec.argsEl && rec.body.childElementCount === 1 && !("result" in data)) {
      rec.body.append(el("p", { class: "step-empty", text: "No details." }));
    }
  }

  function interruptSteps(reason) {
    for (const rec of state.steps.values()) {
      if (rec.node.dataset.state === "processing") {
        setOutcome(rec, "cancelled", reason || "interrupted");
        if (reason !== "stopped by the person") rec.status.textContent = "interrupted";
      }
    }
  }

  function onStatus(p) {
    const data = (p && p.data) || {};
    const callId = data.callId;
    if (!callId) {
      // a turn-level status: cancellation, or a hint of what the host is doing
      if (data.cancelled) {
        interruptSteps("stopped by the person");
        addNotice(p.message || "Stopped.", "stopped");
      } else if (p && p.message) {
        els.workingText.textContent = p.message;
      }
      return;
    }
    let rec = state.steps.get(callId);
    // providers may reuse call ids across rounds ("call_0"): a new "processing" for a finished step is a new step
    if (rec && p.state === "processing" && rec.node.dataset.state !== "processing") rec = null;
    if (!rec) rec = createStep(callId, p.tool, data.title);
    else if (p.tool && p.tool !== rec.tool) {
      rec.tool = p.tool;
    }
    if (p.state === "processing") {
      rec.node.dataset.state = "processing";
      if (p.message) rec.status.textContent = "running…";
      setStepArgs(rec, data.arguments);
      els.workingText.textContent = p.message || "Working…";
    } else if (p.state === "complete" || p.state === "error") {
      if (p.state === "error" && data.isError === undefined) data.isError = true;
      finishStep(rec, data, p.message);
      showApp(data.app);
      els.workingText.textContent = "Working…";
      endAssistant(); // text after a step starts a new bubble
    }
    scrollToBottom();
  }

  function addHistoryTool(m, index) {
    const rec = createStep(`h-${index}`, m.tool, m.title);
    setStepArgs(rec, m.arguments);
    finishStep(rec, {
      result: m.result, isError: !!m.isError, durationMs: m.durationMs,
      outcome: m.outcome, headline: m.headline, title: m.title,
    }, "");
    const source = { tool: m.tool, arguments: m.arguments, result: m.result };
    if (Array.isArray(m.images)) m.images.forEach((image) => addImage(image, source));
    showApp(m.app);
  }

  // a tool result's MCP Apps view, live in the conversation (apps.js)
  function showApp(app) {
    if (app && typeof app === "object" && window.llmemApps) append(window.llmemApps.show(app));
  }

  // -- images

  const IMAGE_TYPES = /^image\/(png|jpeg|jpg|gif|webp|svg\+xml|bmp)$/i;

  function addImage(p, source) {
    endAssistant();
    if (!source && p && p.callId && state.steps.has(p.callId)) {
      const rec = state.steps.get(p.callId);
      source = { tool: rec.tool, arguments: rec.args, result: () => rec.result };
    }
    const mime = String((p && p.mimeType) || "image/png");
    const data = String((p && p.data) || "").replace(/[^A-Za-z0-9+/=]/g, "");
    if (!IMAGE_TYPES.test(mime) || !data) {
      addError(`An image arrived in a form the page cannot show (${mime}).`);
      return;
    }
    const src = `data:${mime};base64,${data}`;
    const img = el("img", {
      src, alt: p.alt || "Image from a tool (click to open it larger)", loading: "lazy", tabindex: "0", role: "button",
    });
    // the picture and "Open full size" do the same: the overlay, fitted, then the larger redraw
    // its file name is the host's (llmem/host/steps.py picture_name: the plot and the moment drawn)
    const name = typeof p.name === "string" && p.name ? p.name : "picture.png";
    const show = () => openFull(mime, data, source, name);
    img.addEventListener("click", show);
    img.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); show(); }
    });
    img.addEventListener("load", () => scrollToBottom(), { once: true });
    const open = el("button", { type: "button", class: "linkish open-full", text: "Open full size" });
    open.addEventListener("click", show);
    const save = el("a", { class: "linkish download", href: src, download: name, text: "Download PNG",
      title: `Save the picture as ${name}` });
    if (!/png/i.test(mime)) save.textContent = "Download";
    const caption = el("figcaption", null, el("span", { class: "image-hint", text: "Click the picture to open it larger" }),
      el("span", { class: "image-links" }, open, save));
    const fig = el("figure", { class: "chat-image" }, el("div", { class: "image-frame" }, img), caption);
    append(fig);
  }

  // a picture's file name: its plot and the moment drawn, e.g. nelson-collingwood-1995-12-12T104509Z.png
  // "Open full size": the step's tool draws the picture again as large as it can (the host asks
  // it, without the model); meanwhile, and when it cannot, the picture as it is, at natural size.
  let zoomCount = 0;
  function openFull(mime, data, source, name) {
    state.zoomScale = null; // it opens fitted to the window
    state.zoomName = name;
    showZoom(mime, data, source && source.tool ? "Drawing it larger…" : "");
    if (!source || !source.tool || !source.arguments || typeof source.arguments !== "object") return;
    const zoomId = `z-${++zoomCount}`;
    state.zooms.set(zoomId, true);
    // what the inline picture drew (its time, the plot's revision and selection then): the same again
    const result = typeof source.result === "function" ? source.result() : source.result;
    const drawn = parseMaybeJson(result);
    const payload = { zoomId, tool: source.tool, arguments: source.arguments };
    if (drawn && typeof drawn === "object" && !Array.isArray(drawn)) {
      payload.drawn = { time: drawn.time, revision: drawn.revision, selectedIds: drawn.selectedIds };
    }
    if (!sendJson({ type: "zoom", payload })) {
      els.zoomNote.textContent = "Not connected: this is the picture as it came.";
    }
  }

  function showZoom(mime, data, note) {
    const img = el("img", { src: `data:${mime};base64,${data}`, alt: "The picture at full size" });
    img.addEventListener("load", () => applyZoom(), { once: true });
    els.zoomFrame.replaceChildren(img);
    els.zoomNote.textContent = note || "";
    els.zoomDownload.href = img.src; // the picture shown: the larger one once it is drawn
    els.zoomDownload.download = state.zoomName || "picture.png";
    if (!els.zoomDialog.open) els.zoomDialog.showModal();
    applyZoom();
  }

  // the overlay's scale: fitted (state.zoomScale null) or a factor of the picture's own pixels
  function fitScale(img) {
    const f = els.zoomFrame;
    if (!img.naturalWidth || !f.clientWidth) return 1;
    return Math.min(f.clientWidth / img.naturalWidth, f.clientHeight / img.naturalHeight);
  }

  function applyZoom(keep) {
    const img = els.zoomFrame.querySelector("img");
    if (!img || !img.naturalWidth) return;
    const f = els.zoomFrame;
    // the point in the middle of the frame stays in the middle
    const cx = (f.scrollLeft + f.clientWidth / 2) / Math.max(1, f.scrollWidth);
    const cy = (f.scrollTop + f.clientHeight / 2) / Math.max(1, f.scrollHeight);
    const scale = state.zoomScale === null ? fitScale(img) : state.zoomScale;
    img.style.width = `${Math.max(16, Math.round(img.naturalWidth * scale))}px`;
    els.zoomLevel.textContent = `${Math.round(scale * 100)}%`;
    $("#zoom-fit").setAttribute("aria-pressed", state.zoomScale === null ? "true" : "false");
    $("#zoom-actual").setAttribute("aria-pressed", state.zoomScale === 1 ? "true" : "false");
    if (keep) {
      f.scrollLeft = cx * f.scrollWidth - f.clientWidth / 2;
      f.scrollTop = cy * f.scrollHeight - f.clientHeight / 2;
    }
  }

  function zoomBy(factor) {
    const img = els.zoomFrame.querySelector("img");
    if (!img || !img.naturalWidth) return;
    const now = state.zoomScale === null ? fitScale(img) : state.zoomScale;
    state.zoomScale = Math.min(8, Math.max(0.05, now * factor));
    applyZoom(true);
  }

  $("#zoom-fit").addEventListener("click", () => { state.zoomScale = null; applyZoom(); });
  $("#zoom-actual").addEventListener("click", () => { state.zoomScale = 1; applyZoom(true); });
  $("#zoom-in").addEventListener("click", () => zoomBy(1.25));
  $("#zoom-out").addEventListener("click", () => zoomBy(1 / 1.25));
  // Ctrl+wheel, and a trackpad's pinch (which the browser sends as Ctrl+wheel)
  els.zoomFrame.addEventListener("wheel", (e) => {
    if (!e.ctrlKey && !e.metaKey) return;
    e.preventDefault();
    zoomBy(e.deltaY < 0 ? 1.1 : 1 / 1.1);
  }, { passive: false });
  // a two-finger pinch on a touch screen
  const touches = new Map();
  let pinchFrom = 0;
  const spread = () => {
    const [a, b] = [...touches.values()];
    return Math.hypot(a.x - b.x, a.y - b.y);
  };
  els.zoomFrame.addEventListener("pointerdown", (e) => {
    if (e.pointerType !== "touch") return;
    touches.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (touches.size === 2) pinchFrom = spread();
  });
  els.zoomFrame.addEventListener("pointermove", (e) => {
    if (!touches.has(e.pointerId)) return;
    touches.set(e.pointerId, { x: e.clientX, y: e.clientY });
    if (touches.size === 2 && pinchFrom > 0) {
      const now = spread();
      if (Math.abs(now - pinchFrom) > 8) { zoomBy(now / pinchFrom); pinchFrom = now; }
    }
  });
  for (const end of ["pointerup", "pointercancel", "pointerleave"]) {
    els.zoomFrame.addEventListener(end, (e) => { touches.delete(e.pointerId); pinchFrom = 0; });
  }
  window.addEventListener("resize", () => { if (els.zoomDialog.open && state.zoomScale === null) applyZoom(); });

  function onZoomed(p) {
    if (!state.zooms.delete(p.zoomId) || !els.zoomDialog.open) return;
    if (p.error) {
      els.zoomNote.textContent = `Shown as it came (${clip(p.error, 160)}).`;
      return;
    }
    const mime = String(p.mimeType || "image/png");
    if (!IMAGE_TYPES.test(mime)) return;
    const data = String(p.data || "").replace(/[^A-Za-z0-9+/=]/g, "");
    const size = p.width ? `Drawn again at ${p.width}×${p.height} px.` : "";
    showZoom(mime, data, p.changed ? `Redrawn now: the plot has changed since. ${size}` : size);
    if (p.width) els.zoomDownload.download = (state.zoomName || "picture.png").replace(/(\.\w+)$/, `-${p.width}px$1`);
  }

  $("#zoom-close").addEventListener("click", () => els.zoomDialog.close());
  els.zoomDialog.addEventListener("click", (e) => { if (e.target === els.zoomDialog) els.zoomDialog.close(); });

  // -- confirmations

  function addConfirm(p) {
    endAssistant();
    const requestId = String(p.requestId || "");
    if (requestId && state.confirms.has(requestId)) {
      // sent again after a reconnect: keep the card already shown
      const old = state.confirms.get(requestId);
      if (old.node.isConnected) return;
    }
    const approve = el("button", { type: "button", class: "approve", text: "Allow" });
    const always = el("button", {
      type: "button", class: "approve-always", text: "Allow for this session",
      title: `Run ${p.tool || "this tool"} without asking again until the session ends`,
    });
    const deny = el("button", { type: "button", class: "deny", text: "Deny" });
    const outcome = el("span", { class: "confirm-outcome", role: "status" });
    const bodyParts = [];
    bodyParts.push(el("div", { class: "confirm-title" },
      el("span", { class: "confirm-icon", "aria-hidden": "true", text: "⚠" }),
      el("span", { text: "Approval needed: " }), stepLabel(p.tool, p.title)));
    if (p.change) {
      bodyParts.push(el("p", { class: "confirm-message" }, "This will ", el("strong", { text: p.change }), "."));
    } else if (p.message) {
      bodyParts.push(el("p", { class: "confirm-message", text: p.message }));
    }
    if (p.arguments !== undefined) {
      const args = valueBlock(p.arguments, "Arguments");
      args.classList.add("no-label"); // the disclosure says "Arguments" already
      bodyParts.push(el("details", { class: "confirm-args" }, el("summary", { text: "Arguments" }), args));
    }
    const actions = el("div", { class: "confirm-actions" }, approve, always, deny, outcome);
    const node = el("section", {
      class: "confirm-card", "data-request-id": requestId, "data-state": "pending",
      "aria-label": `Approval needed for ${p.tool || "a tool"}`,
    }, ...bodyParts, actions);
    const card = { node, approve, always, deny, outcome };
    const choose = (yes, forSession = false) => {
      const payload = { requestId, approve: yes };
      if (forSession) payload.always = true;
      if (!sendJson({ type: "confirm", payload })) {
        outcome.textContent = "Not connected — try again when the connection is back.";
        return;
      }
      settleConfirm(card, yes ? "approved" : "denied", forSession);
      els.workingText.textContent = "Working…";
    };
    approve.addEventListener("click", () => choose(true));
    always.addEventListener("click", () => choose(true, true));
    deny.addEventListener("click", () => choose(false));
    state.confirms.set(requestId, card);
    append(node);
    setBusy(true);
    els.workingText.textContent = "Waiting for your approval…";
  }

  function settleConfirm(card, how, forSession = false) {
    card.approve.disabled = true;
    if (card.always) card.always.disabled = true;
    card.deny.disabled = true;
    card.node.dataset.state = how;
    card.outcome.textContent = how === "approved" ? (forSession ? "✓ Allowed for this session" : "✓ Allowed")
      : how === "denied" ? "✗ Denied" : "No longer waiting";
    (how === "approved" ? (forSession ? card.always : card.approve) : card.deny).classList.add("chosen");
    if (how === "expired") card.deny.classList.remove("chosen");
  }

  function expireConfirms() {
    for (const card of state.confirms.values()) {
      if (card.node.dataset.state === "pending") settleConfirm(card, "expired");
    }
  }

  // -- history

  function clearConversation() {
    state.current = null;
    state.renderQueued = false;
    state.steps.clear();
    state.confirms.clear();
    if (window.llmemApps) window.llmemApps.teardownAll(); // live views hear ui/resource-teardown (apps.js)
    els.conversation.replaceChildren();
    updateEmpty();
  }

  const STOPPED_MARK = "(stopped by the person)"; // the host's note of a turn the person stopped

  function onHistory(p) {
    clearConversation();
    const messages = (p && Array.isArray(p.messages)) ? p.messages : [];
    messages.forEach((m, k) => {
      if (!m || typeof m !== "object") return;
      if (m.role === "user") addUser(String(m.content ?? ""), m.attachments);
      else if (m.role === "assistant") {
        const text = typeof m.content === "string" ? m.content : m.content == null ? "" : safeStringify(m.content);
        if (text === STOPPED_MARK) addNotice("Stopped.", "stopped"); // as it showed when it happened
        else if (text.trim()) addAssistant(text);
      } else if (m.role === "tool") addHistoryTool(m, k);
    });
    closeTurns(state.busy);
    updateEmpty();
    scrollToBottom(true);
  }

  // ---------------------------------------------------------------- input & busy state

  function setBusy(busy) {
    state.busy = busy;
    if (!busy) state.stopping = false;
    const wasHidden = els.working.hidden;
    els.working.hidden = !busy;
    if (busy && wasHidden) scrollToBottom();
    if (!busy) els.workingText.textContent = "Working…";
    updateControls();
  }

  function updateControls() {
    const b = els.send;
    if (state.busy) {
      b.dataset.mode = "stop";
      b.textContent = state.stopping ? "Stopping…" : "Stop";
      b.setAttribute("aria-label", "Stop the running answer");
      b.disabled = !state.open || state.stopping;
      b.classList.add("stop");
    } else {
      b.dataset.mode = "send";
      b.textContent = "Send";
      b.setAttribute("aria-label", "Send message");
      b.classList.remove("stop");
      const files = window.llmemPage && window.llmemPage.attach ? window.llmemPage.attach.saved().length : 0;
      b.disabled = !state.open || (els.input.value.trim() === "" && !files);
    }
    document.body.dataset.busy = state.busy ? "true" : "false";
    for (const button of els.conversation.querySelectorAll(".msg-action.edit, .msg-action.regenerate")) {
      button.disabled = state.busy || !state.open;
    }
    let note = "";
    if (!state.open) note = "Not connected — sending is paused until the host is back.";
    else if (state.busy) note = state.stopping ? "Stopping…" : "Answering… you can type your next message.";
    els.note.textContent = note;
  }

  function autoGrow() {
    const t = els.input;
    t.style.height = "auto";
    const max = Math.max(120, Math.min(260, window.innerHeight * 0.35));
    t.style.height = `${Math.min(t.scrollHeight, max)}px`;
    t.style.overflowY = t.scrollHeight > max ? "auto" : "hidden";
  }

  function submit() {
    if (state.busy) return;
    const text = els.input.value.trim();
    const attach = window.llmemPage && window.llmemPage.attach;
    if (attach && attach.pending()) {
      els.note.textContent = "Wait for the files to be saved, then send.";
      return;
    }
    const files = attach ? attach.saved() : [];
    if (!text && !files.length) return;
    const payload = { text };
    if (files.length) payload.attachments = files;
    if (state.switching && !state.open) state.queued = payload; // sent when the new chat is there
    else if (!state.open || !sendJson({ type: "message", payload })) return;
    if (attach) attach.clear();
    addUser(text, files);
    els.input.value = "";
    autoGrow();
    state.current = null;
    setBusy(true);
    scrollToBottom(true);
  }

  function stop() {
    if (!state.busy || state.stopping) return;
    if (sendJson({ type: "cancel" })) {
      state.stopping = true;
      updateControls();
      // should the host never answer, give the button back after a while
      setTimeout(() => {
        if (state.stopping) { state.stopping = false; updateControls(); }
      }, 4000);
    }
  }

  els.form.addEventListener("submit", (e) => {
    e.preventDefault();
    if (state.busy) stop();
    else submit();
  });

  els.input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing && e.keyCode !== 229) {
      e.preventDefault();
      submit(); // while a turn runs Enter does nothing; the button is the way to stop
    }
  });
  // Escape stops the running turn, as the Stop button does
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && state.busy && !e.defaultPrevented) stop();
  });
  els.input.addEventListener("input", () => {
    autoGrow();
    updateControls();
  });
  window.addEventListener("resize", autoGrow);

  // a suggestion is sent as it is, as people expect of it; while a turn runs (or offline) it
  // waits in the input instead
  function useChip(chip) {
    chip.addEventListener("click", () => {
      els.input.value = chip.textContent.trim();
      autoGrow();
      updateControls();
      if (!state.busy && state.open) {
        submit();
        return;
      }
      els.input.focus();
      els.input.setSelectionRange(els.input.value.length, els.input.value.length);
    });
  }
  for (const chip of document.querySelectorAll(".chip")) useChip(chip);

  // what the host says its model can do (the stand-in: only what it plays through)
  function setSuggestions(list) {
    const chips = list.filter((t) => typeof t === "string" && t.trim()).map((t) => {
      const chip = el("button", { type: "button", class: "chip", role: "listitem", text: t });
      useChip(chip);
      return chip;
    });
    els.chips.replaceChildren(...chips);
  }

  // ---------------------------------------------------------------- connection

  // the input's hint: what the configured servers can answer
  function placeholderFor(servers) {
    const plots = servers.some((s) => s.includes("debrief"));
    const code = servers.some((s) => s.includes("llmem"));
    if (plots && code) return "Ask about a plot or the code…";
    if (plots) return "Ask about the plots and REP files here…";
    if (code) return "Ask about the code…";
    return servers.length ? `Ask something ${servers.join(", ")} can answer…` : "Ask a question…";
  }

  function setConnection(s, text, title) {
    els.connection.dataset.state = s;
    els.connText.textContent = text;
    tip(els.connection, title || "Connection to the host");
    document.body.dataset.connection = s;
  }

  function wsUrl() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const q = new URLSearchParams();
    if (state.sessionId) q.set("session", state.sessionId);
    const token = new URLSearchParams(location.search).get("token");
    if (token) q.set("token", token);
    const qs = q.toString();
    return `${proto}//${location.host}/ws${qs ? `?${qs}` : ""}`;
  }

  function sendJson(obj) {
    const ws = state.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    try {
      ws.send(JSON.stringify(obj));
      return true;
    } catch (_) {
      return false;
    }
  }

  function connect() {
    clearTimeout(state.retryTimer);
    state.retryTimer = null;
    if (state.ws && (state.ws.readyState === WebSocket.OPEN || state.ws.readyState === WebSocket.CONNECTING)) return;
    let ws;
    try {
      ws = new WebSocket(wsUrl());
    } catch (_) {
      scheduleReconnect();
      return;
    }
    state.ws = ws;
    ws.addEventListener("message", (ev) => {
      if (state.ws !== ws) return;
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch (_) {
        return; // not JSON: ignore
      }
      if (!msg || typeof msg !== "object") return;
      try {
        handle(msg);
      } catch (err) {
        console.error("could not handle", msg, err);
      }
    });
    ws.addEventListener("close", () => {
      if (state.ws !== ws) return;
      state.ws = null;
      state.open = false;
      endAssistant();
      if (state.busy) {
        interruptSteps("connection lost");
        setBusy(false);
      }
      updateControls();
      if (state.replaced) return; // told it was replaced: it waits for a click, not to push another page out
      scheduleReconnect();
    });
    ws.addEventListener("error", () => {
      /* a close event follows */
    });
  }

  function scheduleReconnect() {
    if (state.retryTimer) return;
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_START_MS * 2 ** state.attempts);
    state.attempts += 1;
    if (state.attempts > OFFLINE_AFTER_ATTEMPTS || navigator.onLine === false) {
      setConnection("offline", "offline", `Retrying in ${Math.round(delay / 1000)} s — click to retry now`);
    } else {
      setConnection("reconnecting", "reconnecting…", "Trying to reach the host again");
    }
    state.retryTimer = setTimeout(() => {
      state.retryTimer = null;
      connect();
    }, delay);
  }

  function retryNow() {
    if (state.open) return;
    state.replaced = false;
    state.attempts = 0;
    clearTimeout(state.retryTimer);
    state.retryTimer = null;
    connect();
  }

  els.connection.addEventListener("click", () => {
    if (state.open) showStatus();
    else retryNow();
  });

  // A new conversation at once: a new session on the host; the old one stays there, in the list
  // of earlier chats (nothing is lost, so nothing is asked: a dialog would take the keys the
  // person starts typing). What is in the box stays; a question sent while the new session
  // connects is sent once it is there.
  els.newChat.addEventListener("click", () => startNewChat());

  function leaveAddress() {
    // the address may name the session (?session=…): a new or other chat must not keep it
    const q = new URLSearchParams(location.search);
    if (q.has("session")) {
      q.delete("session");
      const qs = q.toString();
      history.replaceState(null, "", `${location.pathname}${qs ? `?${qs}` : ""}`);
    }
  }

  // the address names this chat (?session=…), so copying it opens the same chat on a phone
  function showAddress(sessionId) {
    const q = new URLSearchParams(location.search);
    if (q.get("session") === sessionId) return;
    q.set("session", sessionId);
    history.replaceState(null, "", `${location.pathname}?${q.toString()}`);
  }

  function startNewChat() {
    if (state.busy) sendJson({ type: "cancel" });
    leaveAddress();
    writeSession(null);
    clearConversation();
    const ws = state.ws;
    state.ws = null;
    state.open = false;
    if (ws) ws.close();
    setBusy(false);
    state.attempts = 0;
    state.switching = true;
    connect();
    els.input.focus();
  }

  window.addEventListener("online", retryNow);
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && !state.open && !state.replaced) retryNow();
  });

  function onConnection(p) {
    p = p || {};
    if (p.state === "error") {
      setConnection("error", "error", p.message || "The host refused the connection");
      addError(p.message || "The host could not set up the session.");
      return;
    }
    if (p.state === "replaced") { // too many pages on this chat: this one stops, and says so
      state.replaced = true;
      endAssistant();
      if (state.busy) { interruptSteps("disconnected"); setBusy(false); }
      setConnection("offline", "disconnected", "Click to reconnect");
      addNotice(p.message || "This page was disconnected. Click the connection badge to reconnect.", "stopped");
      return;
    }
    if (p.state === "deleted") { // this chat was deleted (here, or on another page): a new one
      startNewChat();
      addNotice(p.message || "This chat was deleted.", "stopped");
      return;
    }
    const previous = state.sessionId;
    state.hello = p;
    if (window.llmemApps) window.llmemApps.configure({ appsPort: p.appsPort, send: sendJson });
    if (p.sessionId) writeSession(p.sessionId);
    if (p.sessionId) document.body.dataset.session = p.sessionId; // which chat this is (tests read it)
    if (p.sessionId) showAddress(p.sessionId);
    state.open = true;
    state.attempts = 0;
    const failing = serverTrouble(p.serverStates);
    setConnection(failing ? "degraded" : "connected", failing ? `connected · ${failing}` : "connected",
      `${p.message || "Connected to the host"} — click for the model and the servers`);
    setModels(p.models, p.model);
    showModel({ id: p.model, label: p.provider, standIn: p.standIn, suggestions: p.suggestions });
    const servers = Array.isArray(p.servers) ? p.servers.map(String) : [];
    els.input.placeholder = placeholderFor(servers);
    if (!(Array.isArray(p.suggestions) && p.suggestions.length) && servers.length) {
      // the page's own examples: only those the configured servers can answer
      for (const chip of els.chips.querySelectorAll(".chip[data-server]")) {
        chip.hidden = !servers.some((s) => s.includes(chip.dataset.server));
      }
    }
    if (p.state === "connected" && previous && p.sessionId && p.sessionId !== previous &&
        els.conversation.childElementCount > 0) {
      // the host did not know the old session (it restarted, or the session expired)
      clearConversation();
      addNotice("The host started a new session; the earlier conversation is no longer available.");
    }
    if (p.turnRunning && !state.busy) setBusy(true); // a turn another page started is still going
    state.switching = false;
    if (state.queued && p.state === "connected") { // asked while the new chat connected
      const queued = state.queued;
      state.queued = null;
      if (sendJson({ type: "message", payload: queued })) setBusy(true);
    }
    updateControls();
  }

  // "1 server down" when a configured server is not running (its error is in the dialog)
  function serverTrouble(states) {
    const down = (Array.isArray(states) ? states : []).filter((s) => s && s.state !== "running");
    return down.length ? `${down.length} server${down.length > 1 ? "s" : ""} down` : "";
  }

  // -- the model: several to choose from (a select), or the one the host runs

  function setModels(models, current) {
    const list = Array.isArray(models) ? models.filter((m) => m && typeof m.id === "string") : [];
    els.model.hidden = list.length < 2;
    els.provider.hidden = list.length >= 2;
    if (list.length < 2) return;
    els.model.replaceChildren(...list.map((m) => el("option", {
      value: m.id, text: m.standIn ? "Deterministic stand-in — not a model" : m.label || m.id,
    })));
    els.model.value = current || list[0].id;
  }

  function showModel(m) {
    m = m || {};
    const hello = state.hello || {};
    els.provider.textContent = m.standIn ? "" : m.label || "";
    const extra = [];
    if (Array.isArray(hello.servers) && hello.servers.length) extra.push(`servers: ${hello.servers.join(", ")}`);
    if (typeof hello.tools === "number") extra.push(`${hello.tools} tools`);
    els.provider.title = [m.label || "", ...extra].filter(Boolean).join("\n");
    if (m.id && !els.model.hidden) els.model.value = m.id;
    els.model.classList.toggle("is-standin", !!m.standIn);
    els.standin.hidden = !m.standIn || !els.model.hidden; // the select says so itself, amber
    els.model.title = m.standIn ? "Answers come from a scripted stand-in, not from a language model" : "The model that answers in this chat";
    document.body.dataset.standin = m.standIn ? "true" : "false";
    document.body.dataset.model = m.id || "";
    if (Array.isArray(m.suggestions) && m.suggestions.length) setSuggestions(m.suggestions);
    $(".welcome-text").textContent = m.standIn
      ? "No model answers here: the deterministic stand-in plays the requests below through with the tools, and " +
        "each step appears in the conversation and can be expanded. Drop REP files on the page to add ships."
      : "Ask about debrief plots in this workspace or about code the memory has indexed. The model calls tools as " +
        "it goes; each step appears in the conversation and can be expanded. Drop REP, DSF or plot files on the " +
        "page to add them to the workspace.";
  }

  els.model.addEventListener("change", () => {
    if (!sendJson({ type: "model", payload: { id: els.model.value } })) {
      els.model.value = document.body.dataset.model || els.model.value;
    }
  });

  // -- the connection's dialog: the model of this chat, each server's state (and its error)

  const SERVER_STATES = {
    running: "running", failing: "failing: its calls fail fast for a while", stopped: "stopped", failed: "did not start",
  };

  function drawStatus(health) {
    const hello = state.hello || {};
    const states = Array.isArray(health && health.serverStates) ? health.serverStates : hello.serverStates || [];
    $("#status-connection").textContent = state.open
      ? `Connected to the host${state.sessionId ? " · this chat is kept under Chats" : ""}.`
      : "Not connected to the host.";
    const model = (hello.models || []).find((m) => m.id === document.body.dataset.model);
    $("#status-model").textContent = `Model of this chat: ${(model && model.label) || hello.provider || "?"}` +
      ((hello.models || []).length > 1 ? " (choose another in the header)." : ".");
    els.statusServers.replaceChildren(...states.map((sv) => {
      const item = el("li", { class: "status-server", "data-state": sv.state },
        el("span", { class: "server-dot", "aria-hidden": "true" }),
        el("span", { class: "server-name", text: sv.name }),
        el("span", { class: "server-state", text: SERVER_STATES[sv.state] || sv.state }),
        el("span", { class: "server-tools", text: sv.state === "failed" ? "" : `${sv.tools} tool${sv.tools === 1 ? "" : "s"}` }));
      if (sv.error) item.append(el("pre", { class: "server-error", tabindex: "0", text: sv.error }));
      return item;
    }));
    if (!states.length) els.statusServers.replaceChildren(el("li", { class: "chats-empty", text: "No server information yet." }));
    const tokens = health && typeof health.promptTokens === "number" ? health.promptTokens : null;
    $("#status-prompt").textContent = tokens
      ? `Every request starts with about ${tokens.toLocaleString()} tokens of instructions and tool descriptions.` : "";
  }

  async function showStatus() {
    drawStatus(null);
    if (!els.statusDialog.open) els.statusDialog.showModal();
    try {
      const r = await fetch(apiUrl("health"), { credentials: "same-origin", cache: "no-store" });
      if (r.ok) drawStatus(await r.json());
    } catch (_) {
      /* the last connection's view stays */
    }
  }
  $("#status-close").addEventListener("click", () => els.statusDialog.close());

  function handle(msg) {
    const p = msg.payload && typeof msg.payload === "object" ? msg.payload : {};
    switch (msg.type) {
      case "connection":
        onConnection(p);
        break;
      case "history":
        onHistory(p);
        break;
      case "text":
        if (!state.busy) setBusy(true);
        appendText(typeof p.content === "string" ? p.content : "");
        break;
      case "status":
        if (!state.busy && p.state === "processing") setBusy(true);
        onStatus(p);
        break;
      case "image":
        addImage(p);
        break;
      case "confirm":
        addConfirm(p);
        break;
      case "zoomed":
        onZoomed(p);
        break;
      case "user": // a question asked from another page open on this chat
        addUser(typeof p.text === "string" ? p.text : "", p.attachments);
        state.current = null;
        setBusy(true);
        break;
      case "confirmed": { // answered on another page: this card settles the same way
        const card = state.confirms.get(String(p.requestId || ""));
        if (card && card.node.dataset.state === "pending") settleConfirm(card, p.approve ? "approved" : "denied");
        break;
      }
      case "model": // this chat's model changed (here or on another page)
        showModel(p);
        break;
      case "app": // the host's answer to a live view's request (apps.js)
        if (window.llmemApps) window.llmemApps.onFrame(p);
        break;
      case "error":
        addError(typeof p.message === "string" ? p.message : "The host reported an error.");
        break;
      case "done":
        endAssistant();
        for (const n of els.conversation.querySelectorAll(".msg.assistant.streaming")) {
          n.classList.remove("streaming");
          n.removeAttribute("aria-busy");
        }
        interruptSteps("interrupted");
        state.steps.clear(); // call ids belong to one turn
        expireConfirms();
        setBusy(false);
        closeTurns(false);
        break;
      default:
        break; // unknown: ignore
    }
  }

  // ---------------------------------------------------------------- theme

  const THEME_KEY = "llmem-host.theme";
  const systemDark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;

  function chosenTheme() {
    let kept = null;
    try { kept = localStorage.getItem(THEME_KEY); } catch (_) { kept = null; }
    if (kept === "dark" || kept === "light") return kept;
    return systemDark && systemDark.matches ? "dark" : "light";
  }

  function applyTheme() {
    const theme = chosenTheme();
    document.documentElement.dataset.theme = theme;
    els.theme.textContent = theme === "dark" ? "☀" : "☾"; // what a click brings
    els.theme.setAttribute("aria-pressed", theme === "dark" ? "true" : "false");
    els.theme.title = `Switch to the ${theme === "dark" ? "light" : "dark"} page (kept in this browser)`;
    if (window.llmemApps) window.llmemApps.themeChanged(theme); // the live views hear it too
  }

  els.theme.addEventListener("click", () => {
    const next = chosenTheme() === "dark" ? "light" : "dark";
    try { localStorage.setItem(THEME_KEY, next); } catch (_) { /* private mode: this page only */ }
    applyTheme();
  });
  if (systemDark && systemDark.addEventListener) systemDark.addEventListener("change", applyTheme);

  // ---------------------------------------------------------------- start

  applyTheme();

  updateEmpty();
  setBusy(false);
  autoGrow();
  setConnection("connecting", "connecting…");
  connect();
  if (window.matchMedia && window.matchMedia("(pointer: fine)").matches) els.input.focus({ preventScroll: true });

  // a server that dies while the page is open: the connection's pill says so within a minute
  setInterval(async () => {
    if (!state.open || document.visibilityState !== "visible") return;
    try {
      const r = await fetch(apiUrl("health"), { credentials: "same-origin", cache: "no-store" });
      if (!r.ok || !state.open) return;
      const health = await r.json();
      state.hello = { ...state.hello, serverStates: health.serverStates, servers: health.servers };
      const failing = serverTrouble(health.serverStates);
      setConnection(failing ? "degraded" : "connected", failing ? `connected · ${failing}` : "connected",
        "Connected to the host — click for the model and the servers");
      if (els.statusDialog.open) drawStatus(health);
    } catch (_) {
      /* the socket's own close says when the host is gone */
    }
  }, 30000);

  // for chats.js and attach.js, for debugging in the console and for tests
  window.llmemPage = {
    renderMarkdown, state, els, el, apiUrl, copyText, sendJson, startNewChat, clip, formatSize, updateControls,
    addNotice, autoGrow,
  };
})();
