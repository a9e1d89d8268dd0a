// llmem host — attaching files: picked with the clip button or dropped on the page, each is saved
// into the workspace at once (POST /files, llmem/host/chats_api.py) and shown as a chip above the
// input; the next message names the saved files, so the model knows they are there. A name that is
// taken is never overwritten without asking: keep both (saved as "name (2).rep"), replace, or cancel.
(() => {
  "use strict";

  const page = window.llmemPage;
  if (!page) return;
  const { el, apiUrl, formatSize } = page;
  const $ = (sel) => document.querySelector(sel);
  const tray = $("#attachments");
  const picker = $("#file-input");
  const zone = $("#drop-zone");
  const conflict = $("#conflict-dialog");
  const files = []; // {name, size, state: saving|saved|refused, chip}
  let dragDepth = 0;

  function limit() {
    const given = page.state.hello && page.state.hello.uploadLimit;
    return typeof given === "number" ? given : 25 * 1024 * 1024;
  }

  function draw(entry) {
    const remove = el("button", { type: "button", class: "file-remove", "aria-label": `Remove ${entry.name} from this message`,
      title: entry.state === "saved" ? "Not in this message (the file stays in the workspace)" : "Remove" }, "×");
    remove.addEventListener("click", () => {
      files.splice(files.indexOf(entry), 1);
      entry.chip.remove();
      refresh();
      page.els.input.focus();
    });
    const said = entry.state === "saving" ? "saving…" : entry.state === "saved" ? (entry.note || "saved") : entry.error;
    const chip = el("li", { class: "file-chip", "data-state": entry.state },
      el("span", { class: "file-name", text: entry.name }),
      el("span", { class: "file-size", text: formatSize(entry.size) }),
      el("span", { class: "file-state", role: entry.state === "refused" ? "alert" : null, text: said }),
      remove);
    if (entry.chip) entry.chip.replaceWith(chip);
    else tray.append(chip);
    entry.chip = chip;
    refresh();
  }

  function refresh() {
    tray.hidden = files.length === 0;
    page.updateControls();
  }

  // the person's answer when the name is taken: "keep" (under the free name), "replace" or "cancel"
  function ask(name, suggested) {
    return new Promise((resolve) => {
      $("#conflict-text").textContent =
        `${name} is already in the workspace. Keep both (this one saved as “${suggested}”), replace the one there, or cancel?`;
      const answer = (how) => () => { conflict.close(how); };
      const done = () => {
        conflict.removeEventListener("close", done);
        resolve(conflict.returnValue || "cancel");
      };
      conflict.returnValue = "";
      $("#conflict-keep").onclick = answer("keep");
      $("#conflict-replace").onclick = answer("replace");
      $("#conflict-cancel").onclick = answer("cancel");
      conflict.addEventListener("close", done);
      conflict.showModal();
      $("#conflict-keep").focus();
    });
  }

  async function send(file, name, replace) {
    const params = { name };
    if (replace) params.replace = "1";
    const r = await fetch(apiUrl("files", params), {
      method: "POST", body: file, credentials: "same-origin", headers: { "Content-Type": "application/octet-stream" },
    });
    let body = {};
    try { body = await r.json(); } catch (_) { body = {}; }
    return { status: r.status, body };
  }

  async function save(file) {
    const entry = { name: file.name, size: file.size, state: "saving" };
    files.push(entry);
    draw(entry);
    if (file.size > limit()) {
      Object.assign(entry, { state: "refused", error: `too large: the limit is ${formatSize(limit())}` });
      draw(entry);
      return;
    }
    try {
      let answer = await send(file, file.name, false);
      if (answer.status === 409 && answer.body.suggested) {
        const how = await ask(file.name, answer.body.suggested);
        if (how === "cancel") {
          files.splice(files.indexOf(entry), 1);
          entry.chip.remove();
          refresh();
          return;
        }
        answer = await send(file, how === "keep" ? answer.body.suggested : file.name, how === "replace");
      }
      if (answer.status === 201 || (answer.status === 200 && answer.body.unchanged)) {
        const saved = answer.body;
        const note = saved.unchanged ? "already in the workspace" : saved.replaced ? "saved, replacing the old one"
          : saved.name !== file.name ? `saved as ${saved.name}` : "saved";
        Object.assign(entry, { name: saved.name, size: saved.size, state: "saved", note });
      } else {
        Object.assign(entry, { state: "refused", error: answer.body.error || `not saved (the host answered ${answer.status})` });
      }
    } catch (err) {
      Object.assign(entry, { state: "refused", error: `not saved: ${err.message}` });
    }
    draw(entry);
  }

  async function saveAll(list) {
    for (const file of list) await save(file); // one at a time: a question about a name waits its turn
  }

  $("#attach").addEventListener("click", () => picker.click());
  picker.addEventListener("change", () => {
    const picked = [...picker.files];
    picker.value = "";
    saveAll(picked);
  });

  // drop anywhere on the page
  const carriesFiles = (e) => e.dataTransfer && [...(e.dataTransfer.types || [])].includes("Files");
  document.addEventListener("dragenter", (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    dragDepth += 1;
    zone.hidden = false;
  });
  document.addEventListener("dragover", (e) => {
    if (!carriesFiles(e)) return;
    e.preventDefault();
    e.dataTransfer.dropEffect = "copy";
  });
  document.addEventListener("dragleave", (e) => {
    if (!carriesFiles(e)) return;
    dragDepth = Math.max(0, dragDepth - 1);
    if (dragDepth === 0) zone.hidden = true;
  });
  document.addEventListener("drop", (e) => {
    if (!e.dataTransfer || !e.dataTransfer.files || !e.dataTransfer.files.length) return;
    e.preventDefault();
    dragDepth = 0;
    zone.hidden = true;
    saveAll([...e.dataTransfer.files]);
  });

  page.attach = {
    saved: () => files.filter((f) => f.state === "saved").map((f) => ({ name: f.name, size: f.size })),
    pending: () => files.some((f) => f.state === "saving"),
    clear: () => {
      files.splice(0, files.length);
      tray.replaceChildren();
      refresh();
    },
  };
})();
