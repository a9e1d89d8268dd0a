// llmem host — the sandbox proxy of MCP Apps views (SEP-1865 "Sandbox proxy").
// Served from another origin than the chat page (the host's second port); the page embeds it
// with ?host=<the page's origin>&csp=<the view's _meta.ui.csp>, and this server sends the policy
// built from that csp as this document's header, which the view's srcdoc document inherits.
// Here the view's HTML is loaded in an inner iframe under the same policy as a meta tag (the
// specification's construction), and every message that is not ui/notifications/sandbox-* is
// passed between the page and the view unchanged. Messages are taken only from the page's
// origin and from the view, and sent only to them.
(() => {
  "use strict";
  const params = new URLSearchParams(location.search);
  const hostOrigin = params.get("host") || "";
  let inner = null;

  // The policy as the specification builds it: nothing outside unless declared.
  const ORIGIN = /^(https?|wss?):\/\/(\*\.)?[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*(:\d{1,5})?$/;
  function origins(csp, key) {
    const given = csp && Array.isArray(csp[key]) ? csp[key] : [];
    return given.filter((o) => typeof o === "string" && ORIGIN.test(o));
  }
  function policy(csp) {
    const c = csp && typeof csp === "object" ? csp : {};
    const res = origins(c, "resourceDomains");
    const plus = (xs) => (xs.length ? " " + xs.join(" ") : "");
    const connect = origins(c, "connectDomains");
    const frames = origins(c, "frameDomains");
    const bases = origins(c, "baseUriDomains");
    return [
      "default-src 'none'",
      "script-src 'self' 'unsafe-inline'" + plus(res),
      "style-src 'self' 'unsafe-inline'" + plus(res),
      "img-src 'self' data:" + plus(res),
      "font-src 'self'" + plus(res),
      "media-src 'self' data:" + plus(res),
      connect.length ? "connect-src" + plus(connect) : "connect-src 'none'",
      "frame-src " + (frames.length ? frames.join(" ") : "'none'"),
      "object-src 'none'",
      "base-uri " + (bases.length ? bases.join(" ") : "'self'"),
    ].join("; ");
  }

  function escapeAttr(s) {
    return String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  }

  // The meta goes first in the document (after a doctype), so no markup of the view runs before it.
  function withPolicy(html, csp) {
    const meta = `<meta http-equiv="Content-Security-Policy" content="${escapeAttr(policy(csp))}">`;
    const doctype = /^\s*<!doctype[^>]*>/i.exec(html);
    return doctype ? doctype[0] + meta + html.slice(doctype[0].length) : meta + html;
  }

  function load(p) {
    if (inner) return; // one view per proxy
    inner = document.createElement("iframe");
    inner.setAttribute("sandbox", "allow-scripts allow-same-origin");
    inner.setAttribute("title", "MCP App view");
    inner.srcdoc = withPolicy(String(p.html || ""), p.csp);
    document.body.appendChild(inner);
    window.__viewPolicy = policy(p.csp); // for tests and the curious: what the view runs under
  }

  window.addEventListener("message", (event) => {
    const msg = event.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") return;
    if (event.source === window.parent && event.origin === hostOrigin) {
      if (msg.method === "ui/notifications/sandbox-resource-ready") {
        load(msg.params || {});
        return;
      }
      if (inner && inner.contentWindow) inner.contentWindow.postMessage(msg, location.origin);
    } else if (inner && event.source === inner.contentWindow) {
      if (typeof msg.method === "string" && msg.method.startsWith("ui/notifications/sandbox-")) return;
      window.parent.postMessage(msg, hostOrigin);
    }
  });
  if (hostOrigin) {
    window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, hostOrigin);
  }
})();
