// llmem host — MCP Apps views in the conversation (SEP-1865, io.modelcontextprotocol/ui).
// When a tool's result links a ui:// view, the page shows it live under the step: the view's
// HTML (read through the host, which reads it from the view's own server) runs in a sandbox
// proxy served from the host's second port — another origin than this page — inside an iframe
// with sandbox="allow-scripts allow-same-origin". The page answers the view's ui/initialize with
// its context (theme, container size, inline), sends it the tool's input and result once it says
// ui/notifications/initialized, sizes the frame on ui/notifications/size-changed, and passes its
// tools/call and resources/read to the host over the page's WebSocket, naming the view's server:
// the host calls only that server, and only tools a view may call. Plain ES2020, no dependencies.
(() => {
  "use strict";

  const PROTOCOL = "2026-01-26";
  const MIN_HEIGHT = 160;
  const START_HEIGHT = 480;
  const TEARDOWN_WAIT_MS = 800;

  const apps = {
    port: null, // the sandbox proxy's port, from the host's connection frame
    send: null, // the page's sendJson
    views: new Set(),
    pending: new Map(), // request id -> {resolve}
    html: new Map(), // server + uri -> Promise of {html, csp, prefersBorder}
    next: 1,
    teardowns: [], // {uri, answered}: the views that went, and whether they answered ui/resource-teardown
  };
  const dark = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  // the page's theme (its Dark/Light button, else the system's), which app.js keeps on <html>
  function theme() {
    const chosen = document.documentElement.dataset.theme;
    if (chosen === "dark" || chosen === "light") return chosen;
    return dark && dark.matches ? "dark" : "light";
  }

  function proxyOrigin() {
    const host = location.hostname.includes(":") ? `[${location.hostname}]` : location.hostname;
    return `${location.protocol}//${host}:${apps.port}`;
  }

  function maxHeight() {
    return Math.max(280, Math.min(560, window.innerHeight - 200));
  }

  function context(view) {
    const ctx = {
      theme: theme(),
      displayMode: "inline",
      availableDisplayModes: ["inline"],
      containerDimensions: { width: Math.round(view.frame.clientWidth || view.node.clientWidth), maxHeight: maxHeight() },
      platform: "web",
      deviceCapabilities: {
        touch: !!(window.matchMedia && window.matchMedia("(pointer: coarse)").matches),
        hover: !!(window.matchMedia && window.matchMedia("(hover: hover)").matches),
      },
    };
    try {
      ctx.locale = navigator.language;
      ctx.timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    } catch (_) { /* optional */ }
    return ctx;
  }

  // -- the host: requests over the page's WebSocket

  function ask(server, method, params) {
    return new Promise((resolve) => {
      const id = `a${apps.next++}`;
      if (!apps.send || !apps.send({ type: "app", payload: { id, server, method, params } })) {
        resolve({ error: { code: -32000, message: "the page is not connected to the host just now" } });
        return;
      }
      apps.pending.set(id, resolve);
    });
  }

  function onFrame(p) {
    const resolve = apps.pending.get(p && p.id);
    if (!resolve) return;
    apps.pending.delete(p.id);
    resolve(p.error ? { error: p.error } : { result: p.result });
  }

  function viewResource(server, uri) {
    const key = `${server}\n${uri}`;
    if (!apps.html.has(key)) {
      const promise = ask(server, "resources/read", { uri }).then((answer) => {
        if (answer.error) throw new Error(answer.error.message || "the view could not be read");
        const contents = (answer.result && answer.result.contents) || [];
        const c = contents.find((x) => x && x.uri === uri) || contents[0];
        if (!c || !String(c.mimeType || "").startsWith("text/html")) throw new Error(`${uri} is not an HTML view`);
        const html = typeof c.text === "string" ? c.text : new TextDecoder().decode(Uint8Array.from(atob(c.blob || ""), (ch) => ch.charCodeAt(0)));
        const ui = (c._meta && c._meta.ui) || {};
        return { html, csp: ui.csp || {}, prefersBorder: ui.prefersBorder };
      });
      promise.catch(() => apps.html.delete(key)); // a failed read is tried again by the next view
      apps.html.set(key, promise);
    }
    return apps.html.get(key);
  }

  // -- one view

  function show(app) {
    const title = document.createElement("span");
    title.className = "app-title";
    title.textContent = `Live view · ${app.server}`;
    const note = document.createElement("span");
    note.className = "app-note";
    note.textContent = "loading…";
    const head = document.createElement("div");
    head.className = "app-head";
    head.append(title, note);
    const frame = document.createElement("iframe");
    frame.className = "app-frame";
    frame.setAttribute("sandbox", "allow-scripts allow-same-origin");
    frame.setAttribute("title", `Live view of ${app.tool || "the tool's result"} (${app.uri})`);
    frame.setAttribute("referrerpolicy", "no-referrer");
    frame.style.height = `${START_HEIGHT}px`;
    const node = document.createElement("figure");
    node.className = "app-view";
    node.dataset.server = app.server;
    node.dataset.uri = app.uri;
    node.dataset.state = "loading";
    node.append(head, frame);
    const view = { app, node, frame, note, ready: false, origin: null, resource: null, pending: new Map(), next: 1 };
    view.key = keyOf(app);
    if (view.key) for (const older of [...apps.views]) if (older.key === view.key) retire(older);
    if (!apps.port) {
      fail(view, "this host serves no sandbox for live views");
      return node;
    }
    view.origin = proxyOrigin();
    apps.views.add(view);
    viewResource(app.server, app.uri).then((resource) => {
      if (view.retired) return;
      view.resource = resource;
      if (resource.prefersBorder === false) node.classList.add("borderless");
      const q = new URLSearchParams({ host: location.origin, csp: JSON.stringify(resource.csp || {}) });
      frame.src = `${view.origin}/sandbox.html?${q}`;
    }, (err) => fail(view, String(err.message || err)));
    return node;
  }

  // One live view per plot: a later result of the same view and file takes over, and the earlier
  // one hears ui/resource-teardown and gives its place to a line saying where the view went.
  function keyOf(app) {
    const result = app.toolResult || {};
    const structured = result.structuredContent || {};
    const file = structured.filename || (app.toolInput || {}).filename;
    return typeof file === "string" && file ? `${app.server}\n${app.uri}\n${file}` : null;
  }

  function retire(view) {
    view.retired = true;
    teardown(view, "a later result shows the same view").then(() => {
      view.frame.remove();
      view.node.dataset.state = "moved";
      view.note.textContent = "the live view moved to the latest result below";
    });
  }

  function fail(view, why) {
    view.node.dataset.state = "error";
    view.note.textContent = `the live view could not be shown: ${why}`;
    view.frame.remove();
  }

  function post(view, message) {
    if (view.frame.contentWindow) view.frame.contentWindow.postMessage({ jsonrpc: "2.0", ...message }, view.origin);
  }

  function answer(view, id, outcome) {
    post(view, outcome.error ? { id, error: outcome.error } : { id, result: outcome.result });
  }

  async function onViewMessage(view, msg) {
    const method = msg.method;
    if (method === undefined && msg.id !== undefined) { // an answer to the host's own request
      const resolve = view.pending.get(msg.id);
      if (resolve) { view.pending.delete(msg.id); resolve(msg); }
      return;
    }
    switch (method) {
      case "ui/notifications/sandbox-proxy-ready":
        post(view, {
          method: "ui/notifications/sandbox-resource-ready",
          params: { html: view.resource.html, csp: view.resource.csp, sandbox: "allow-scripts allow-same-origin" },
        });
        return;
      case "ui/initialize":
        answer(view, msg.id, { result: {
          protocolVersion: PROTOCOL,
          hostInfo: { name: "llmem-host", version: "1" },
          hostCapabilities: { serverTools: {}, serverResources: {}, logging: {} },
          hostContext: context(view),
        } });
        return;
      case "ui/notifications/initialized":
        view.ready = true;
        view.node.dataset.state = "ready";
        view.note.textContent = view.app.tool ? `from ${view.app.tool}` : "";
        post(view, { method: "ui/notifications/tool-input", params: { arguments: view.app.toolInput || {} } });
        post(view, { method: "ui/notifications/tool-result", params: view.app.toolResult || {} });
        return;
      case "ui/notifications/size-changed": {
        const h = Number(msg.params && msg.params.height);
        if (isFinite(h) && h > 0) view.frame.style.height = `${Math.round(Math.max(MIN_HEIGHT, Math.min(maxHeight(), h)))}px`;
        return;
      }
      case "tools/call":
      case "resources/read":
        answer(view, msg.id, await ask(view.app.server, method, msg.params || {}));
        return;
      case "ping":
        answer(view, msg.id, { result: {} });
        return;
      case "ui/request-display-mode":
        answer(view, msg.id, { result: { mode: "inline" } });
        return;
      case "notifications/message":
        return; // the view's log: nothing to show the person
      default:
        if (msg.id !== undefined) answer(view, msg.id, { error: { code: -32601, message: `this host does not support ${method}` } });
    }
  }

  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    for (const view of apps.views) {
      if (event.source === view.frame.contentWindow && event.origin === view.origin) {
        onViewMessage(view, msg).catch((err) => console.warn("a live view's message failed", err));
        return;
      }
    }
  });

  function tellAll(params) {
    for (const view of apps.views) if (view.ready) post(view, { method: "ui/notifications/host-context-changed", params: params(view) });
  }
  function themeChanged(now) {
    tellAll(() => ({ theme: now === "dark" || now === "light" ? now : theme() }));
  }
  let resizeTimer = null;
  window.addEventListener("resize", () => {
    clearTimeout(resizeTimer);
    resizeTimer = setTimeout(() => tellAll((view) => ({ containerDimensions: context(view).containerDimensions })), 150);
  });

  // -- going away: ui/resource-teardown, answered (or given up on) before the frame is removed

  function teardown(view, reason) {
    if (view.closing) return view.closing;
    if (!view.ready) {
      apps.views.delete(view);
      return Promise.resolve();
    }
    const id = `t${view.next++}`;
    view.closing = new Promise((resolve) => {
      const done = setTimeout(() => {
        view.pending.delete(id);
        apps.teardowns.push({ uri: view.app.uri, answered: false });
        resolve();
      }, TEARDOWN_WAIT_MS);
      view.pending.set(id, () => {
        clearTimeout(done);
        apps.teardowns.push({ uri: view.app.uri, answered: true });
        resolve();
      });
      post(view, { id, method: "ui/resource-teardown", params: { reason } });
    }).then(() => apps.views.delete(view)); // its answer still comes through the message listener
    return view.closing;
  }

  // Before the conversation is cleared: the views move (alive, where the browser can move a frame
  // without reloading it) to a hidden holder, hear ui/resource-teardown, and go once they answer.
  // ``which(node)``: only the views it says (those of the answers an edit or a regeneration drops).
  function teardownAll(reason, which) {
    const holder = document.getElementById("app-teardown") || document.body.appendChild(Object.assign(
      document.createElement("div"), { id: "app-teardown", hidden: true }));
    for (const view of [...apps.views]) {
      if (typeof which === "function" && !which(view.node)) continue;
      if (view.node.isConnected && typeof holder.moveBefore === "function") {
        try { holder.moveBefore(view.node, null); } catch (_) { /* removed with the conversation */ }
      }
      teardown(view, reason || "the conversation was cleared").then(() => view.node.remove());
    }
  }

  function configure(p) {
    apps.port = p && typeof p.appsPort === "number" ? p.appsPort : null;
    apps.send = p && p.send;
    for (const resolve of apps.pending.values()) resolve({ error: { code: -32000, message: "the connection to the host was renewed" } });
    apps.pending.clear();
  }

  window.llmemApps = { configure, show, onFrame, teardownAll, themeChanged, views: apps.views, teardowns: apps.teardowns };
})();
