// llmem host — the list of chats: open one, search them by words, rename, export (Markdown with
// its pictures, or JSON) and delete one (with Undo). Uses the host's HTTP API (llmem/host/chats_api.py)
// and window.llmemPage (app.js).
(() => {
  "use strict";

  const page = window.llmemPage;
  if (!page) return;
  const { el, apiUrl } = page;
  const $ = (sel) => document.querySelector(sel);
  const dialog = $("#chats-dialog");
  const list = $("#chats-list");
  const search = $("#chats-search");
  const toast = $("#chats-toast");
  const UNDO_MS = 10000;
  let undoTimer = null;
  let lastDeleted = null;
  let searchTimer = null;
  let asked = 0; // the answer to the latest request wins

  async function api(method, path, body) {
    const init = { method, credentials: "same-origin", cache: "no-store", headers: {} };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const r = await fetch(apiUrl(path), init);
    let data = {};
    try { data = await r.json(); } catch (_) { data = {}; }
    if (!r.ok) throw new Error(data.error || `the host answered ${r.status}`);
    return data;
  }

  function when(c) {
    const moment = new Date((c.lastActiveAt || c.createdAt) * 1000);
    return moment.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  }

  function item(c) {
    const current = c.id === page.state.sessionId;
    const q = new URLSearchParams(location.search);
    q.set("session", c.id);
    const title = c.title || "(no question yet)";
    const link = el("a", {
      href: `?${q.toString()}`, class: current ? "chat-link current" : "chat-link", "aria-current": current ? "page" : null,
    }, el("span", { class: "chat-title", text: title }),
    el("span", { class: "chat-meta", text:
      `${c.messages} question${c.messages === 1 ? "" : "s"} · last active ${when(c)}${current ? " · this chat" : ""}` }),
    c.match ? el("span", { class: "chat-match", text: c.match }) : null);
    const rename = el("button", { type: "button", class: "chat-action chat-rename", text: "Rename", "aria-label": `Rename “${title}”` });
    const markdown = el("a", {
      class: "chat-action chat-export", href: apiUrl(`sessions/${encodeURIComponent(c.id)}/export`, { format: "markdown" }),
      download: "", text: "Markdown", title: "Download this chat as Markdown, its pictures inside",
      "aria-label": `Export “${title}” as Markdown`,
    });
    const json = el("a", {
      class: "chat-action chat-export-json", href: apiUrl(`sessions/${encodeURIComponent(c.id)}/export`, { format: "json" }),
      download: "", text: "JSON", title: "Download this chat as JSON: every step's arguments and result",
      "aria-label": `Export “${title}” as JSON`,
    });
    const remove = el("button", { type: "button", class: "chat-action chat-delete", text: "Delete", "aria-label": `Delete “${title}”` });
    const node = el("li", { class: current ? "chat-item current" : "chat-item", "data-id": c.id }, link,
      el("div", { class: "chat-actions", role: "group", "aria-label": `“${title}”` }, rename, markdown, json, remove));
    rename.addEventListener("click", () => startRename(node, c));
    remove.addEventListener("click", () => removeChat(node, c));
    return node;
  }

  async function load() {
    const mine = ++asked;
    const words = search.value.trim();
    try {
      const body = await api("GET", "sessions" + (words ? `?q=${encodeURIComponent(words)}` : ""));
      if (mine !== asked) return;
      const chats = Array.isArray(body.sessions) ? body.sessions : [];
      const empty = words ? `No chat holds “${words}”.` : "No conversations yet.";
      list.replaceChildren(...(chats.length ? chats.map(item) : [el("li", { class: "chats-empty", text: empty })]));
    } catch (err) {
      if (mine === asked) list.replaceChildren(el("li", { class: "chats-empty", text: `The host did not answer (${err.message}); try again.` }));
    }
  }

  function startRename(node, c) {
    const link = node.querySelector(".chat-link");
    const box = el("input", { type: "text", class: "chat-rename-box", value: c.title || "", maxlength: "120",
      "aria-label": "The chat's new name (empty: its first question)" });
    const save = el("button", { type: "button", class: "chat-action chat-rename-save", text: "Save" });
    const cancel = el("button", { type: "button", class: "chat-action chat-rename-cancel", text: "Cancel",
      title: "Keep the name it has (Esc)" });
    const form = el("div", { class: "chat-rename-form" }, box, save, cancel);
    link.hidden = true;
    node.querySelector(".chat-actions").hidden = true;
    node.prepend(form);
    box.focus();
    box.select();
    let done = false;
    const finish = async (keep) => {
      if (done) return;
      done = true;
      if (keep) {
        try {
          await api("PATCH", `sessions/${encodeURIComponent(c.id)}`, { title: box.value });
        } catch (err) {
          toastSay(`Not renamed: ${err.message}`);
        }
      }
      await load();
      const again = list.querySelector(`.chat-item[data-id="${CSS.escape(c.id)}"] .chat-rename`);
      if (again) again.focus();
    };
    save.addEventListener("click", () => finish(true));
    cancel.addEventListener("click", () => finish(false));
    box.addEventListener("keydown", (e) => {
      if (e.key === "Enter") { e.preventDefault(); finish(true); }
      if (e.key === "Escape") { e.preventDefault(); e.stopPropagation(); finish(false); }
    });
  }

  function toastSay(text, undo) {
    clearTimeout(undoTimer);
    $("#chats-toast-text").textContent = text;
    $("#chats-undo").hidden = !undo;
    toast.hidden = false;
    undoTimer = setTimeout(() => { toast.hidden = true; lastDeleted = null; }, UNDO_MS);
  }

  async function removeChat(node, c) {
    const current = c.id === page.state.sessionId;
    try {
      if (current) page.startNewChat(); // this page moves to a new chat first: the old one's socket closes
      await api("DELETE", `sessions/${encodeURIComponent(c.id)}`);
    } catch (err) {
      toastSay(`Not deleted: ${err.message}`);
      return;
    }
    lastDeleted = { ...c, wasOpen: current };
    node.remove();
    if (!list.querySelector(".chat-item")) list.replaceChildren(el("li", { class: "chats-empty", text: "No conversations left." }));
    toastSay(`Deleted “${c.title || "the chat"}”.`, true);
    $("#chats-undo").focus();
  }

  $("#chats-undo").addEventListener("click", async () => {
    const c = lastDeleted;
    if (!c) return;
    lastDeleted = null;
    try {
      await api("POST", `sessions/${encodeURIComponent(c.id)}/restore`);
      if (c.wasOpen) {
        // the chat this page showed: shown again, where it was (the page had moved to a new one)
        const q = new URLSearchParams(location.search);
        q.set("session", c.id);
        location.assign(`?${q.toString()}`);
        return;
      }
      toastSay(`“${c.title || "The chat"}” is back.`);
    } catch (err) {
      toastSay(`It could not be brought back: ${err.message}`);
    }
    await load();
  });

  search.addEventListener("input", () => {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(load, 200);
  });

  async function open() {
    list.replaceChildren(el("li", { class: "chats-empty", text: "Loading…" }));
    toast.hidden = true;
    if (!dialog.open) dialog.showModal();
    search.focus();
    await load();
  }

  $("#chats").addEventListener("click", open);
  $("#chats-close").addEventListener("click", () => dialog.close());
  page.chats = { open, reload: load };
})();
